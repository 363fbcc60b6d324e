// `orrery plot`: the strict CSV reader, the gnuplot script and data each kind
// makes (values derived by hand from small CSVs), the SVG gnuplot draws from
// them (one mark per row, counted in gnuplot's SVG), determinism, and every
// bad input (exit 2, one line naming the file:line or the flag and the value).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "explore/csv.h"
#include "explore/plot.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

bool HaveGnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }
#define SKIP_WITHOUT_GNUPLOT() \
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox); the drawing tests need it"

using orrery::testing::ReadFileText;

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// Data lines of a gnuplot data file (neither blank nor comments).
int DataLines(const std::string& dat) {
  std::istringstream in(dat);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty() && line[0] != '#';
  return n;
}

// The SVG of gnuplot's k-th plot clause: `<g id="gnuplot_plot_k" ...>` up to its
// matching `</g>` (nested groups counted).
std::string PlotGroup(const std::string& svg, int k) {
  const size_t start = svg.find("<g id=\"gnuplot_plot_" + std::to_string(k) + "\"");
  if (start == std::string::npos) return "";
  int depth = 0;
  size_t at = start;
  while (at < svg.size()) {
    const size_t open = svg.find("<g", at), close = svg.find("</g>", at);
    if (close == std::string::npos) return "";
    if (open != std::string::npos && open < close) {
      ++depth;
      at = open + 2;
    } else {
      if (--depth == 0) return svg.substr(start, close + 4 - start);
      at = close + 4;
    }
  }
  return "";
}

// A well-formed-enough SVG from gnuplot: the XML prolog, one <svg>, ends with </svg>.
void ExpectSvg(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u) << svg.substr(0, 80);
  EXPECT_EQ(Count(svg, "<svg"), 1);
  const size_t end = svg.find_last_not_of(" \n");
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(svg.substr(end - 5, 6), "</svg>");
}

// A sweep's CSV: two bandwidths x three algorithms (one quoted with a comma),
// iteration times chosen by hand, and one failed run.
const char kSweep[] =
    "network.dim1.bandwidth_gbps,system.all-reduce-implementation,gen.tp,finished_ns,iteration_s,compute_ns,"
    "exposed_comm_ns,mem_stall_ns,idle_ns,status,hash\n"
    "100,ring,1,1000,0.001,600,300,50,50,ok,h1\n"
    "50,ring,1,1300,0.0013,600,600,50,50,ok,h2\n"
    "100,\"direct, 2\",1,900,0.0009,600,200,60,40,ok,h3\n"
    "50,\"direct, 2\",1,1100,0.0011,600,400,60,40,ok,h4\n"
    "100,halvingDoubling,1,950,0.00095,600,250,70,30,ok,h5\n"
    "50,halvingDoubling,1,1200,0.0012,600,500,70,30,ok,h6\n"
    "25,ring,1,,,,,,,\"error: network.yml:3: bandwidth = \"\"x\"\"\",h7\n";

struct CliRun {
  int rc = -1;
  std::string out, err;
};

CliRun Cli(const std::string& args, const std::string& env = "") {
  CliRun r;
  r.rc = testing::RunCliCapture(args, &r.out, &r.err, env);
  return r;
}

TEST(PlotCsv, ReadsQuotedFieldsAsRfc4180) {
  auto t = ParseCsv("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\n2,\"two\nlines\",\n3,,\"\"", "t.csv");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(t->rows[0], (std::vector<std::string>{"1", "x, y", "say \"hi\""}));
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"2", "two\nlines", ""}));
  EXPECT_EQ(t->rows[2], (std::vector<std::string>{"3", "", ""}));
  EXPECT_EQ(t->lines, (std::vector<int>{2, 3, 5}));  // the quoted line break moves the next record to line 5
  EXPECT_EQ(t->Column("c"), 2);
  EXPECT_EQ(t->Column("d"), -1);
}

TEST(PlotCsv, StrictErrorsNameFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a,b\n1,2\n3\n", "t.csv:3: 1 field(s), the header (line 1) has 2; allowed: exactly 2"},
      {"a,b\n1,2,3\n", "t.csv:2: 3 field(s), the header (line 1) has 2"},
      {"a,b\n1,2\n\n", "t.csv:3: 1 field(s)"},
      {"a,b\n1,\"2\n", "t.csv:2: a quoted field is never closed"},
      {"a,b\n1,x\"y\n", "t.csv:2: a quote inside an unquoted field"},
      {"a,b\n1,\"x\"y\n", "t.csv:2: text after a closing quote"},
      {"a,a\n1,2\n", "t.csv:1: column name \"a\" appears twice (columns 1 and 2)"},
      {"a,,c\n1,2,3\n", "t.csv:1: column 2 of the header has no name"},
      {"", "t.csv: empty file"},
  };
  for (const auto& [text, needle] : cases) {
    auto t = ParseCsv(text, "t.csv");
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.status().exit_code(), 2);
    EXPECT_TRUE(Has(t.status().message(), needle)) << "missing '" << needle << "' in: " << t.status().message();
  }
}

// A header of 100,000 columns is checked in one pass (a scan per column took
// 16 s); a name given twice is found with both columns.
TEST(PlotCsv, WideHeaderCheckedInOnePass) {
  std::string header, row;
  for (int i = 0; i < 100000; ++i) {
    header += (i ? ",c" : "c") + std::to_string(i);
    row += i ? ",1" : "1";
  }
  auto t = ParseCsv(header + "\n" + row + "\n", "wide.csv");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->header.size(), 100000u);
  auto twice = ParseCsv(header + ",c5\n" + row + ",1\n", "wide.csv");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "wide.csv:1: column name \"c5\" appears twice (columns 6 and 100001); allowed: each name once");
}

// The script and data, in process: cells, positions and tick labels by hand.
TEST(Plot, HeatmapDataAndTicsByHand) {
  auto csv = ParseCsv(kSweep, "sweep.csv");
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  PlotOptions o;
  o.csv = "sweep.csv";
  o.kind = "heatmap";
  o.x = "network.dim1.bandwidth_gbps";
  o.y = "system.all-reduce-implementation";
  o.z = "iteration_s";
  o.out = "dir/heat.svg";
  auto f = BuildPlot(csv.value(), o);
  ASSERT_TRUE(f.ok()) << f.status().message();
  // x: 50 < 100 (numeric, ascending); y: algorithms in order of first appearance.
  EXPECT_TRUE(Has(f->gp, "set xtics ('50' 0, '100' 1)\n")) << f->gp;
  EXPECT_TRUE(Has(f->gp, "set ytics ('ring' 0, 'direct, 2' 1, 'halvingDoubling' 2)\n")) << f->gp;
  EXPECT_TRUE(Has(f->gp, "set output 'heat.svg'\n")) << f->gp;
  EXPECT_TRUE(Has(f->gp, "plot 'heat.dat' using 1:2:(0.5):(0.5):3 with boxxyerror")) << f->gp;
  EXPECT_EQ(
      f->dat,
      "# x index (network.dim1.bandwidth_gbps), y index (system.all-reduce-implementation), iteration_s, CSV line\n"
      "0 0 0.0013 3\n"
      "0 1 0.0011 5\n"
      "0 2 0.0012 7\n"
      "1 0 0.001 2\n"
      "1 1 0.0009 4\n"
      "1 2 0.00095 6\n");
  EXPECT_EQ(f->marks, 6);
  EXPECT_EQ(f->skipped, 1);
  EXPECT_TRUE(Has(f->note, "skipped 1 of 7 row(s) whose status is not ok (first: sweep.csv:8: status = \"error: "))
      << f->note;
}

// Front by hand: (1,9) (2,5) (3,6) (4,2) (4,3) (6,1) (5,5) -> (1,9) (2,5) (4,2) (6,1).
TEST(Plot, ParetoFrontByHand) {
  auto csv = ParseCsv(
      "cfg,finished_ns,exposed_comm_ns,status\na,1,9,ok\nb,2,5,ok\nc,3,6,ok\nd,4,2,ok\n"
      "e,4,3,ok\nf,6,1,ok\ng,5,5,ok\n",
      "p.csv");
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  PlotOptions o;
  o.kind = "pareto";
  o.x = "finished_ns";
  o.y = "exposed_comm_ns";
  o.out = "p.svg";
  auto f = BuildPlot(csv.value(), o);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const std::string front = f->dat.substr(f->dat.find("\n\n\n") + 3);
  EXPECT_EQ(front, "# the Pareto front, ascending finished_ns\n1 9 2\n2 5 3\n4 2 5\n6 1 7\n");
  EXPECT_EQ(DataLines(f->dat), 7 + 4);
  EXPECT_TRUE(Has(f->report, "4 of 7 row(s)")) << f->report;
  EXPECT_TRUE(Has(f->report, "  line 5: finished_ns=4 exposed_comm_ns=2 | cfg=d\n")) << f->report;
  EXPECT_FALSE(Has(f->report, "cfg=e")) << f->report;  // (4,3) is dominated by (4,2)
}

TEST(Plot, HeatmapSvgHasOneCellPerRowAndNamesItsAxes) {
  SKIP_WITHOUT_GNUPLOT();
  TempDir d;
  d.Write("sweep.csv", kSweep);
  const CliRun r = Cli("plot " + d.File("sweep.csv") +
                       " --kind=heatmap --x=network.dim1.bandwidth_gbps --y=system.all-reduce-implementation "
                       "--z=iteration_s -o " +
                       d.File("heat.svg"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "orrery: note: plot: skipped 1 of 7 row(s) whose status is not ok (first: " + d.File("sweep.csv") +
                       ":8: status = \"error: network.yml:3: bandwidth = \"x\"\")\n");
  const std::string svg = ReadFileText(d.File("heat.svg"));
  ExpectSvg(svg);
  for (const char* label : {">network.dim1.bandwidth_gbps<", ">system.all-reduce-implementation<", ">iteration_s<",
                            ">direct, 2<", ">halvingDoubling<"}) {
    EXPECT_TRUE(Has(svg, label)) << label;
  }
  EXPECT_EQ(DataLines(ReadFileText(d.File("heat.dat"))), 6);
  EXPECT_EQ(Count(PlotGroup(svg, 1), "<polygon"), 6);  // one filled cell per ok row
  EXPECT_TRUE(std::filesystem::exists(d.File("heat.gp")));
}

TEST(Plot, LinesDrawOnePointPerRowInEachSeries) {
  SKIP_WITHOUT_GNUPLOT();
  TempDir d;
  d.Write("sweep.csv", kSweep);
  const CliRun r = Cli("plot " + d.File("sweep.csv") +
                       " --kind=lines --x=network.dim1.bandwidth_gbps --y=iteration_s "
                       "--series=system.all-reduce-implementation --title=\"bandwidth sweep\" -o " +
                       d.File("l.svg"));
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string svg = ReadFileText(d.File("l.svg"));
  ExpectSvg(svg);
  EXPECT_TRUE(Has(svg, ">bandwidth sweep<"));
  EXPECT_TRUE(Has(svg, ">system.all-reduce-implementation<"));  // the key's title
  EXPECT_TRUE(Has(svg, ">direct, 2<"));
  for (int k = 1; k <= 3; ++k) {
    // two rows per algorithm, plus the point in the key's sample
    EXPECT_EQ(Count(PlotGroup(svg, k), "<use xlink:href='#gpPt"), 2 + 1) << "series " << k;
  }
  EXPECT_EQ(PlotGroup(svg, 4), "");
  const std::string dat = ReadFileText(d.File("l.dat"));
  EXPECT_TRUE(Has(dat, "# ring\n50 0.0013 3\n100 0.001 2\n")) << dat;
}

TEST(Plot, StackedDrawsOneSegmentPerRowAndLayer) {
  SKIP_WITHOUT_GNUPLOT();
  TempDir d;
  d.Write("sweep.csv", kSweep);
  const CliRun r = Cli("plot " + d.File("sweep.csv") + " --kind=stacked --x=hash -o " + d.File("s.svg"));
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string svg = ReadFileText(d.File("s.svg"));
  ExpectSvg(svg);
  for (const char* label : {">compute_ns<", ">exposed_comm_ns<", ">mem_stall_ns<", ">idle_ns<", ">hash<", ">h6<"}) {
    EXPECT_TRUE(Has(svg, label)) << label;
  }
  for (int k = 1; k <= 4; ++k) EXPECT_EQ(Count(PlotGroup(svg, k), "<polygon"), 6 + 1) << "layer " << k;  // + key
  const std::string dat = ReadFileText(d.File("s.dat"));
  EXPECT_EQ(DataLines(dat), 6);
  EXPECT_TRUE(Has(dat, "\n1 600 600 50 50 3\n")) << dat;  // h2: position 1, CSV line 3
  EXPECT_TRUE(Has(ReadFileText(d.File("s.gp")), "using 1:(0):($1-0.4):($1+0.4):($2+$3):($2+$3+$4) with boxxyerror"));
}

// A sweep CSV with the peer_wait_ns column (written since the category
// existed): the default stack has five layers, waiting on peers between the
// memory stall and idle; the CSV above, without it, keeps four.
TEST(Plot, StackedDefaultIncludesPeerWaitWhenTheCsvHasIt) {
  SKIP_WITHOUT_GNUPLOT();
  TempDir d;
  d.Write("sweep.csv",
          "gen.pp,finished_ns,iteration_s,compute_ns,exposed_comm_ns,mem_stall_ns,peer_wait_ns,idle_ns,status,hash\n"
          "1,1000,0.000001,600,300,0,0,100,ok,h1\n"
          "4,1500,0.0000015,600,100,0,700,100,ok,h2\n");
  const CliRun r = Cli("plot " + d.File("sweep.csv") + " --kind=stacked --x=hash -o " + d.File("s.svg"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(Has(ReadFileText(d.File("s.svg")), ">peer_wait_ns<"));
  const std::string dat = ReadFileText(d.File("s.dat"));
  EXPECT_TRUE(Has(dat, "\n1 600 100 0 700 100 3\n")) << dat;  // h2: position 1, CSV line 3
}

TEST(Plot, ParetoSvgMarksEveryRowAndTheFront) {
  SKIP_WITHOUT_GNUPLOT();
  TempDir d;
  d.Write("sweep.csv", kSweep);
  const CliRun r = Cli("plot " + d.File("sweep.csv") + " --kind=pareto --x=finished_ns --y=exposed_comm_ns -o " +
                       d.File("p.svg"));
  ASSERT_EQ(r.rc, 0) << r.err;
  // Every ok row has compute 600: finished = 600 + exposed + mem + idle, so the
  // least finished (h3, 900) also has the least exposed (200): a front of one.
  EXPECT_EQ(r.out, "pareto front of " + d.File("sweep.csv") +
                       ": 1 of 6 row(s), minimising finished_ns and exposed_comm_ns\n"
                       "  line 4: finished_ns=900 exposed_comm_ns=200 | network.dim1.bandwidth_gbps=100 "
                       "system.all-reduce-implementation=\"direct, 2\" gen.tp=1\n");
  const std::string svg = ReadFileText(d.File("p.svg"));
  ExpectSvg(svg);
  EXPECT_EQ(Count(PlotGroup(svg, 1), "<use xlink:href='#gpPt"), 6 + 1);
  EXPECT_EQ(Count(PlotGroup(svg, 2), "<use xlink:href='#gpPt"), 1 + 1);
  EXPECT_TRUE(Has(svg, ">finished_ns<") && Has(svg, ">exposed_comm_ns<"));
}

TEST(Plot, SameCsvGivesByteIdenticalScriptAndData) {
  SKIP_WITHOUT_GNUPLOT();
  TempDir a, b;
  a.Write("sweep.csv", kSweep);
  b.Write("sweep.csv", kSweep);
  const std::string flags =
      " --kind=lines --x=network.dim1.bandwidth_gbps --y=iteration_s "
      "--series=system.all-reduce-implementation -o ";
  ASSERT_EQ(Cli("plot " + a.File("sweep.csv") + flags + a.File("out.svg")).rc, 0);
  ASSERT_EQ(Cli("plot " + b.File("sweep.csv") + flags + b.File("out.svg")).rc, 0);
  for (const char* f : {"out.gp", "out.dat", "out.svg"}) {
    EXPECT_FALSE(ReadFileText(a.File(f)).empty()) << f;
    EXPECT_EQ(ReadFileText(a.File(f)), ReadFileText(b.File(f))) << f;
  }
  // The script reruns by hand in its folder and draws the same image.
  std::filesystem::remove(a.File("out.svg"));
  ASSERT_EQ(std::system(("cd " + a.path() + " && gnuplot out.gp").c_str()), 0);
  EXPECT_EQ(ReadFileText(a.File("out.svg")), ReadFileText(b.File("out.svg")));
}

TEST(Plot, PngThroughPngcairo) {
  SKIP_WITHOUT_GNUPLOT();
  TempDir d;
  d.Write("sweep.csv", kSweep);
  const CliRun r = Cli("plot " + d.File("sweep.csv") + " --kind=stacked --x=hash --stack=compute_ns,idle_ns -o " +
                       d.File("s.png"));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(ReadFileText(d.File("s.png")).substr(0, 8), "\x89PNG\r\n\x1a\n");
  EXPECT_TRUE(Has(ReadFileText(d.File("s.gp")), "set terminal pngcairo"));
}

TEST(Plot, MissingGnuplotNamesThePackage) {
  TempDir d;
  d.Write("sweep.csv", kSweep);
  const CliRun r = Cli("plot " + d.File("sweep.csv") + " --kind=stacked --x=hash -o " + d.File("s.svg"),
                       "PATH=/nonexistent");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_TRUE(Has(r.err, "orrery: cannot run 'gnuplot': not found on PATH")) << r.err;
  EXPECT_TRUE(Has(r.err, "install Debian's gnuplot-nox")) << r.err;
  EXPECT_EQ(DataLines(ReadFileText(d.File("s.dat"))), 6);  // the script and data are there to run later
  EXPECT_FALSE(std::filesystem::exists(d.File("s.svg")));
}

TEST(Plot, BadInputsExit2NamingFileLineOrFlag) {
  TempDir d;
  d.Write("sweep.csv", kSweep);
  d.Write("ragged.csv", "gen.tp,iteration_s,status\n1,0.5,ok\n2,0.25\n");
  d.Write("word.csv", "gen.tp,iteration_s,status\n1,0.5,ok\n2,fast,ok\n");
  d.Write("dup.csv", "gen.tp,gen.dp,iteration_s,status\n1,2,0.5,ok\n2,2,0.4,ok\n1,2,0.3,ok\n");
  d.Write("dupx.csv", "gen.tp,gen.dp,iteration_s,status\n1,2,0.5,ok\n1,4,0.4,ok\n");
  d.Write("failed.csv", "gen.tp,iteration_s,status\n1,,\"error: bad, input\"\n2,,timeout\n");
  d.Write("empty.csv", "gen.tp,iteration_s,status\n");
  const std::string sweep = d.File("sweep.csv"), out = " -o " + d.File("x.svg");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plot " + d.File("ragged.csv") + " --kind=lines --x=gen.tp --y=iteration_s" + out,
       d.File("ragged.csv") + ":3: 2 field(s), the header (line 1) has 3; allowed: exactly 3"},
      {"plot " + sweep + " --kind=lines --x=network.dim1.bandwidth --y=iteration_s" + out,
       "--x = \"network.dim1.bandwidth\": no such column in " + sweep +
           " (did you mean 'network.dim1.bandwidth_gbps'?); available: network.dim1.bandwidth_gbps, "
           "system.all-reduce-implementation, gen.tp, finished_ns"},
      {"plot " + sweep + " --kind=stacked --x=hash --stack=compute_ns,exposed_comms_ns" + out,
       "--stack = \"exposed_comms_ns\": no such column in " + sweep + " (did you mean 'exposed_comm_ns'?)"},
      {"plot " + d.File("word.csv") + " --kind=lines --x=gen.tp --y=iteration_s" + out,
       d.File("word.csv") + ":3: iteration_s = \"fast\": not a number; allowed: a number >= 0"},
      {"plot " + d.File("dup.csv") + " --kind=heatmap --x=gen.tp --y=gen.dp --z=iteration_s" + out,
       d.File("dup.csv") + ":2 and " + d.File("dup.csv") +
           ":4 both have gen.tp = \"1\", gen.dp = \"2\": --kind=heatmap draws one cell per (x, y)"},
      {"plot " + d.File("dupx.csv") + " --kind=lines --x=gen.tp --y=iteration_s" + out,
       d.File("dupx.csv") + ":2 and " + d.File("dupx.csv") +
           ":3 both have gen.tp = \"1\": --kind=lines draws one point per x in each series; they differ in gen.dp; "
           "allowed: one row per mark (filter the CSV, or pass --series=COL)"},
      {"plot " + sweep + " --kind=heatmpa --x=gen.tp" + out,
       "--kind = \"heatmpa\": unknown kind (did you mean 'heatmap'?); allowed: heatmap, lines, stacked, pareto"},
      {"plot " + sweep + " --kind=lines --x=gen.tp --y=iteration_s", "'orrery plot' needs -o OUT.svg or -o OUT.png"},
      {"plot " + sweep + " --kind=lines --x=gen.tp --y=iteration_s -o " + d.File("x.pdf"),
       "-o = \"" + d.File("x.pdf") + "\": unknown image type \".pdf\"; allowed: OUT.svg, OUT.png"},
      {"plot " + d.File("failed.csv") + " --kind=lines --x=gen.tp --y=iteration_s" + out,
       d.File("failed.csv") + ": none of its 2 row(s) has status ok (first: " + d.File("failed.csv") +
           ":2: status = \"error: bad, input\"); allowed: at least one row with status ok"},
      {"plot " + d.File("empty.csv") + " --kind=lines --x=gen.tp --y=iteration_s" + out,
       d.File("empty.csv") + ": no rows below the header"},
      {"plot " + sweep + " --kind=lines --x=gen.tp --y=iteration_s --z=finished_ns" + out,
       "--z = \"finished_ns\": not used by --kind=lines, which takes --x, --y and optionally --series"},
      {"plot " + sweep + " --kind=heatmap --x=gen.tp --z=iteration_s" + out,
       "--kind=heatmap needs --y=COL; it takes --x, --y, --z"},
      {"plot " + sweep + " --kind=stacked --x=hash --stack=compute_ns,,idle_ns" + out,
       "--stack = \"compute_ns,,idle_ns\": an empty column name"},
      {"plot " + d.File("nothere.csv") + " --kind=stacked --x=hash" + out, d.File("nothere.csv") + ": cannot open"},
      {"plot " + sweep + " --kind=stacked --x=hash --sereis=gen.tp" + out, "(did you mean '--series'?)"},
  };
  for (const auto& [args, needle] : cases) {
    const CliRun r = Cli(args);
    EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("orrery: ", 0), 0u) << args << ": " << r.err;
    EXPECT_TRUE(Has(r.err, needle)) << args << "\nmissing: " << needle << "\nin:      " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": one line expected: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(d.File("x.svg"))) << args;
  }
}

}  // namespace
}  // namespace orrery
