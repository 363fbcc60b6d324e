// Names chosen by the user (keys, algorithms, backends): the nearest known
// name for a did-you-mean, and a list joined for an "allowed" text.
#pragma once
#include <string>
#include <vector>

namespace orrery {

// The closest candidate by edit distance (case-insensitive), or "" when
// nothing is close.
std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates);
std::string JoinStrings(const std::vector<std::string>& items, const std::string& sep);

}  // namespace orrery
