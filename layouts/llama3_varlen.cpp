// What a caller may ask of llama3-varlen: its name; it has no options beyond C.
#include "layouts/layout_option.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration llama3_varlen_declaration;
const LayoutDeclaration llama3_varlen_declaration{.name = "llama3-varlen", .options = {}};

}  // namespace cplab::layouts
