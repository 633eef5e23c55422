// What a caller may ask of stripe: its name; it has no options beyond C.
#include "layouts/layout_option.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration stripe_declaration;
const LayoutDeclaration stripe_declaration{.name = "stripe", .options = {}};

}  // namespace cplab::layouts
