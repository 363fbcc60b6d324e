// The two trees of the double binary tree all-reduce, in closed form. Ring
// positions 0..size-1 (size a power of two) hold a complete binary tree of
// size-1 nodes in in-order below a root with one child: the root takes the
// largest position (root_max, subtree on its left) or the smallest (subtree
// on its right). A node's links come from its position in O(1): in the
// subtree, position i has in-order number j = i+1 and height h = ctz(j); its
// children are j -+ 2^(h-1), its parent j + 2^h when j/2^h is 1 mod 4 (a left
// child) else j - 2^h.
#pragma once
#include <bit>

namespace orrery {

struct DbtLinks {
  int parent = -1, left = -1, right = -1;  // positions, -1 for none
};

inline DbtLinks DoubleBinaryTreeAt(int size, bool root_max, int pos) {
  DbtLinks l;
  const int n = size - 1;              // nodes below the root
  const int first = root_max ? 0 : 1;  // the subtree's first position
  const int root = root_max ? size - 1 : 0;
  const int levels = std::countr_zero(static_cast<unsigned>(size));  // n = 2^levels - 1
  const int top = n > 0 ? (1 << (levels - 1)) : 0;                   // in-order number of the subtree root
  if (pos == root) {
    if (n > 0) (root_max ? l.left : l.right) = first + top - 1;
    return l;
  }
  const int j = pos - first + 1;
  const int h = std::countr_zero(static_cast<unsigned>(j));
  if (h > 0) {
    l.left = first + j - (1 << (h - 1)) - 1;
    l.right = first + j + (1 << (h - 1)) - 1;
  }
  if (j == top) {
    l.parent = root;
  } else {
    l.parent = first + (((j >> h) & 3) == 1 ? j + (1 << h) : j - (1 << h)) - 1;
  }
  return l;
}

}  // namespace orrery
