// What a caller may ask of identity: its name; it has no options beyond C.
#include "layouts/layout_option.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration identity_declaration;
const LayoutDeclaration identity_declaration{.name = "identity", .options = {}};

}  // namespace cplab::layouts
