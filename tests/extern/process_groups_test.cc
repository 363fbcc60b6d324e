// The process-group table a converted trace carries (extern/process_groups.h).
#include "extern/process_groups.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

const char* kWhere = "t.0.et: node 3 (rank 0)";

// As Chakra's converter writes it (tests/data/1.0.2-chakra.0.0.4 of mlcommons/chakra, trace c102).
TEST(ProcessGroupTable, ReadsTheConvertersPythonListOfOneString) {
  const std::string values =
      R"(['[{"pg_name": "0", "backend_id": 82149104, "backend_config": "cuda:nccl", "ranks": [], "group_size": 2, )"
      R"("group_count": 1}, {"pg_name": "1", "ranks": [1, 3], "group_size": 2}]'])";
  auto t = ParseProcessGroupTable(values, kWhere);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].name, "0");
  EXPECT_TRUE((*t)[0].ranks.empty());
  EXPECT_EQ((*t)[0].group_size, 2);
  EXPECT_EQ((*t)[1].name, "1");
  EXPECT_EQ((*t)[1].ranks, (std::vector<int64_t>{1, 3}));
}

TEST(ProcessGroupTable, ReadsTheJsonArrayItselfAndPythonEscapes) {
  auto raw = ParseProcessGroupTable(R"([{"pg_name": 7, "ranks": [0]}])", kWhere);
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  EXPECT_EQ((*raw)[0].name, "7");
  EXPECT_EQ((*raw)[0].group_size, -1);
  // Python's repr switches to double quotes when the text holds a single quote.
  auto quoted = ParseProcessGroupTable(R"(["[{\"pg_name\": \"it's\", \"ranks\": [0, 1]}]"])", kWhere);
  ASSERT_TRUE(quoted.ok()) << quoted.status().message();
  EXPECT_EQ((*quoted)[0].name, "it's");
}

std::string Error(const std::string& values) {
  auto t = ParseProcessGroupTable(values, kWhere);
  return t.ok() ? "(accepted)" : t.status().message();
}

TEST(ProcessGroupTable, MalformedTablesNameTheNodeAndWhatIsWrong) {
  EXPECT_EQ(Error("{}"),
            "t.0.et: node 3 (rank 0): inputs.values does not start with '['; expected the process-group table as "
            "converters write it, ['[{\"pg_name\": ..., \"ranks\": [...]}]']");
  EXPECT_EQ(Error("['[{\"pg_name\": \"0\""),
            "t.0.et: node 3 (rank 0): inputs.values: the quoted table never ends (no closing ')");
  EXPECT_EQ(Error("['[]'"), "t.0.et: node 3 (rank 0): inputs.values: the list never ends (no closing ']')");
  EXPECT_EQ(Error(R"(['[]', 'more'])"),
            "t.0.et: node 3 (rank 0): inputs.values: expected one quoted table in the list, then ']' (found more at "
            "byte 7)");
  EXPECT_EQ(Error(R"(['\q'])"),
            "t.0.et: node 3 (rank 0): inputs.values: byte 2: an escape Python does not write in a string; allowed: "
            "\\\\ \\' \\\" \\n \\r \\t \\xhh \\uhhhh");
  EXPECT_NE(Error("['[{\"pg_name\": }]']").find("t.0.et: node 3 (rank 0): the process-group table is not JSON: "),
            std::string::npos);
  EXPECT_EQ(Error("['{}']"),
            "t.0.et: node 3 (rank 0): the process-group table is not a list; expected [{\"pg_name\": ..., \"ranks\": "
            "[...]}, ...]");
  EXPECT_EQ(Error("['[[[[[[[[[[1]]]]]]]]]]']"),
            "t.0.et: node 3 (rank 0): the process-group table nests deeper than 8 levels; expected a list of "
            "{\"pg_name\": ..., \"ranks\": [...]}");
}

TEST(ProcessGroupTable, EntriesAreCheckedKeyByKey) {
  EXPECT_EQ(Error("[5]"),
            "t.0.et: node 3 (rank 0): process-group table[0] is not an object; expected {\"pg_name\": ..., "
            "\"ranks\": [...]}");
  EXPECT_EQ(Error(R"([{"ranks": []}])"), "t.0.et: node 3 (rank 0): process-group table[0] has no \"pg_name\"");
  EXPECT_EQ(Error(R"([{"pg_name": [1], "ranks": []}])"),
            "t.0.et: node 3 (rank 0): process-group table[0].pg_name = [1]: expected a string (or an integer)");
  EXPECT_EQ(Error(R"([{"pg_name": "", "ranks": []}])"),
            "t.0.et: node 3 (rank 0): process-group table[0].pg_name is empty");
  EXPECT_EQ(Error(R"([{"pg_name": "1"}])"),
            "t.0.et: node 3 (rank 0): process group \"1\" has no \"ranks\" list (an empty list is every rank)");
  EXPECT_EQ(Error(R"([{"pg_name": "1", "ranks": [0, -1]}])"),
            "t.0.et: node 3 (rank 0): process group \"1\".ranks[1] = -1: out of range; allowed: an integer >= 0 and "
            "<= 67108863");
  EXPECT_EQ(Error(R"([{"pg_name": "1", "ranks": [0.5]}])"),
            "t.0.et: node 3 (rank 0): process group \"1\".ranks[0] = 0.5: not an integer; allowed: an integer >= 0 "
            "and <= 67108863");
  EXPECT_EQ(Error(R"([{"pg_name": "1", "ranks": [0], "group_size": 0}])"),
            "t.0.et: node 3 (rank 0): process group \"1\".group_size = 0: out of range; allowed: an integer >= 1 and "
            "<= 67108864");
}

TEST(ProcessGroupTable, AnOversizedTableIsRefusedBeforeParsing) {
  const std::string big(kMaxProcessGroupTableBytes + 1, ' ');
  EXPECT_EQ(Error(big),
            "t.0.et: node 3 (rank 0): inputs.values holds 16777217 bytes; a process-group table is "
            "allowed at most 16777216 bytes");
}

}  // namespace
}  // namespace orrery
