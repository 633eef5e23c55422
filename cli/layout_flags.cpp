// The row and layout-option flags shared by `cplab layout` and `cplab schedule`.
#include "cli/layout_flags.hpp"

namespace cplab::cli {

LayoutSourceArgs LayoutFlags::given() const {
  LayoutSourceArgs args = source;
  args.has_seq_len = seq_len->count() > 0;
  args.has_doc_lens = doc_lens->count() > 0;
  args.has_batch = batch->count() > 0;
  args.has_row = row->count() > 0;
  args.options = &options;
  return args;
}

void add_row_flags(CLI::App* sub, LayoutFlags& flags, const char* row_help) {
  flags.seq_len = sub->add_option("--seq-len", flags.source.seq_len, "Length S of one BSHD row");
  flags.doc_lens = sub->add_option("--doc-lens", flags.source.doc_lens,
                                   "One packed row: document lengths back to back, e.g. 5,3,8");
  flags.batch = sub->add_option("--batch", flags.source.batch_path,
                                "A batch saved with torch.save (packed rows when it has seq_lens)");
  flags.row = sub->add_option("--row", flags.source.row, row_help);
}

void add_layout_option_flags(CLI::App* sub, LayoutFlags& flags) {
  add_option_flags(sub, flags.options);
}

}  // namespace cplab::cli
