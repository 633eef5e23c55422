// What a caller may ask of thd: its name; it has no options beyond C.
#include "layouts/layout_option.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration thd_declaration;
const LayoutDeclaration thd_declaration{.name = "thd", .options = {}};

}  // namespace cplab::layouts
