// What a caller may ask of head-tail: its name; it has no options beyond C.
#include "layouts/layout_option.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration head_tail_declaration;
const LayoutDeclaration head_tail_declaration{.name = "head-tail", .options = {}};

}  // namespace cplab::layouts
