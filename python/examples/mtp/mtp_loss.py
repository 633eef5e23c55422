"""A multi-token prediction loss under CP written as Automodel's is (``calculate_mtp_loss`` beside
the main next-token loss): depth k's targets are the labels k positions ahead in the same
document, each depth's cross entropy is normalised by its own count N_k, and the MTP terms are
weighted lambda/(D-1) (DeepSeek-V3's lambda/D' over its D' MTP modules) on top of the main loss.
Under CP the shift by k is the one step that changes: it must fetch labels from other ranks and
stop at document ends, which ``shift`` (cplab.shift's definition, handed by check_loss) does.

    cplab.testing.check_loss(mtp_loss, LAYOUT, depths=3)

``bug="roll"`` makes the depth-k targets with ``torch.roll(labels, -k)`` on the shard instead,
as Automodel's single-GPU ``roll_tensor`` would under CP: the targets of every chunk's last k
tokens come from the chunk's start or from a token that is not k ahead.
"""
import torch
import torch.nn.functional as F

IGNORE = -100


def _targets(labels, valid, k, shift, bug):
    if bug == "roll":
        rolled = torch.roll(labels, -k, dims=1)
        rolled[:, -k:] = IGNORE
        targets = rolled
    else:
        targets = shift(labels, k, fill=IGNORE)
    return targets.masked_fill(~valid, IGNORE)


def _depth_loss(logits, targets, group, cp_size):
    """This rank's share of one depth's mean: sum of its CE * C / N_k (N_k over the group)."""
    ce = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE,
                         reduction="sum")
    count = group.all_reduce(torch.tensor(float((targets != IGNORE).sum())))
    return ce * cp_size / count if float(count) > 0 else ce * 0.0


def mtp_loss(logits, labels, cp_rank, cp_size, group, *, valid, shift, scaling_factor=0.1,
             bug=None):
    """logits [D, B, l, V] (depth 1's first), labels [B, l] unshifted -> loss_r."""
    depths = logits.shape[0]
    main = _depth_loss(logits[0], _targets(labels, valid, 1, shift, bug), group, cp_size)
    if depths == 1:
        return main
    mtp = sum(_depth_loss(logits[k - 1], _targets(labels, valid, k, shift, bug), group, cp_size)
              for k in range(2, depths + 1))
    return main + scaling_factor / (depths - 1) * mtp
