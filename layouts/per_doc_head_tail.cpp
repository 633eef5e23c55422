// What a caller may ask of per-doc-head-tail: its name; it has no options beyond C.
#include "layouts/layout_option.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration per_doc_head_tail_declaration;
const LayoutDeclaration per_doc_head_tail_declaration{.name = "per-doc-head-tail", .options = {}};

}  // namespace cplab::layouts
