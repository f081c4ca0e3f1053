package dev.tern.conformance.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/SUITES.md stays true to the raw results of the public suites' run (conformance/public-suites.sh) it links
 * under docs/measurements/: every gtests script Tern does not pass has one row in its classification table, every
 * row names such a script with the kernel's result the run recorded, each class is one of {@link #CLASSES}, the
 * counts by class add up to the rows, and the summary's counts are the TSV's. Each rule is shown to fail on a page
 * made to break it.
 */
class PublicSuitesTableTest {
    static final Set<String> CLASSES = Set.of(
        "Tern defect", "deliberate deviation", "needs IPv6", "out of reach", "runner gap");
    /** The link to the raw results; the first one on the page counts. */
    private static final Pattern RAW_TSV = Pattern.compile("\\]\\((measurements/suites/[^)\\s]*gtests[^)\\s]*\\.tsv)\\)");
    /** A row of the classification table: script, the kernel's result, class, why. */
    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+\\.pkt)` \\| ([a-z]+) \\| ([^|]+?) \\| (.*)\\|$");
    /** A row of the counts by class, or of the summary: a label and a whole number. */
    private static final Pattern COUNT = Pattern.compile("^\\| ([^|`]+?) \\| (\\d+) \\|$");

    /** One script's results in the TSV. */
    record Result(String linux, String tern, String agree) { }

    static Path docs() {
        return MeasurementsTest.root().resolve("docs");
    }

    /** The TSV's rows by script (the header skipped). */
    static Map<String, Result> results(List<String> tsv) {
        final Map<String, Result> results = new LinkedHashMap<>();
        for (String line : tsv.subList(Math.min(1, tsv.size()), tsv.size())) {
            if (line.isBlank()) {
                continue;
            }
            final String[] cells = line.split("\t", -1);
            results.put(cells[0], new Result(cells[1], cells[2], cells.length > 5 ? cells[5] : ""));
        }
        return results;
    }

    /** The counts the summary must state, by its labels, computed from the TSV as public-suites.sh prints them. */
    static Map<String, Integer> summary(Map<String, Result> results) {
        int linux = 0;
        int tern = 0;
        int agree = 0;
        int both = 0;
        int stale = 0;
        for (Result r : results.values()) {
            linux += r.linux().equals("pass") ? 1 : 0;
            tern += r.tern().equals("pass") ? 1 : 0;
            agree += r.agree().equals("yes") || r.agree().equals("stale") ? 1 : 0;
            both += r.linux().equals("pass") && r.tern().equals("pass") ? 1 : 0;
            stale += r.agree().equals("stale") ? 1 : 0;
        }
        final Map<String, Integer> counts = new LinkedHashMap<>();
        counts.put("scripts", results.size());
        counts.put("Linux passes", linux);
        counts.put("Tern passes", tern);
        counts.put("same outcome on both", agree);
        counts.put("both fail at the same line (stale)", stale);
        counts.put("Tern passes, of those Linux passes", both);
        return counts;
    }

    /** What is wrong with the page against the TSV, one line each; empty when nothing is. */
    static List<String> problems(List<String> page, List<String> tsv) {
        final List<String> problems = new ArrayList<>();
        final Map<String, Result> results = results(tsv);
        final Map<String, String> classOf = new LinkedHashMap<>();
        final Map<String, Integer> stated = new LinkedHashMap<>();
        for (int i = 0; i < page.size(); i++) {
            final String where = "SUITES.md:" + (i + 1) + ": ";
            final Matcher row = ROW.matcher(page.get(i));
            final Matcher count = COUNT.matcher(page.get(i));
            if (row.matches()) {
                final String script = row.group(1);
                final String cls = row.group(3).strip();
                final Result result = results.get(script);
                if (!CLASSES.contains(cls)) {
                    problems.add(where + script + " has class '" + cls + "', not one of " + new TreeSet<>(CLASSES));
                }
                if (result == null) {
                    problems.add(where + script + " is not in the raw results");
                } else if (result.tern().equals("pass")) {
                    problems.add(where + script + " passes on Tern: it needs no row");
                } else if (!result.linux().equals(row.group(2))) {
                    problems.add(where + script + " says Linux " + row.group(2) + ", the run recorded "
                        + result.linux());
                }
                if (classOf.put(script, cls) != null) {
                    problems.add(where + script + " has a second row");
                }
            } else if (count.matches()) {
                stated.put(count.group(1).strip(), Integer.parseInt(count.group(2)));
            }
        }
        for (Map.Entry<String, Result> e : results.entrySet()) {
            if (!e.getValue().tern().equals("pass") && !classOf.containsKey(e.getKey())) {
                problems.add("SUITES.md: no row classifies " + e.getKey() + " (Tern: " + e.getValue().tern() + ")");
            }
        }
        for (String cls : CLASSES) {
            final long rows = classOf.values().stream().filter(cls::equals).count();
            final Integer count = stated.get(cls);
            if (count == null) {
                problems.add("SUITES.md: the counts by class lack '" + cls + "' (" + rows + " rows)");
            } else if (count != rows) {
                problems.add("SUITES.md: the counts say " + count + " " + cls + ", the table has " + rows);
            }
        }
        for (Map.Entry<String, Integer> e : summary(results).entrySet()) {
            final Integer count = stated.get(e.getKey());
            if (count == null || !count.equals(e.getValue())) {
                problems.add("SUITES.md: the summary says " + e.getKey() + " " + count + ", the raw results "
                    + e.getValue());
            }
        }
        return problems;
    }

    static List<String> page() throws IOException {
        return Files.readAllLines(docs().resolve("SUITES.md"), StandardCharsets.UTF_8);
    }

    static List<String> tsv(List<String> page) throws IOException {
        for (String line : page) {
            final Matcher m = RAW_TSV.matcher(line);
            if (m.find()) {
                return Files.readAllLines(docs().resolve(m.group(1)), StandardCharsets.UTF_8);
            }
        }
        throw new AssertionError("SUITES.md links no raw results (measurements/suites/...gtests....tsv)");
    }

    @Test
    void thePageMatchesTheRawResults() throws IOException {
        final List<String> page = page();
        final List<String> tsv = tsv(page);
        assertTrue(results(tsv).size() >= 150, "the raw results should hold the gtests suite's IPv4 scripts");
        final List<String> problems = problems(page, tsv);
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    // The rules, each on a page and results made to break it.

    private static final List<String> TSV = List.of(
        "script\tlinux\ttern\tlinux_error\ttern_error\tagree",
        "a.pkt\tpass\tpass\t\t\tyes",
        "b.pkt\tpass\tfail\t\tb.pkt:3: x\tno",
        "c.pkt\tfail\tfail\tc.pkt:5: y\tc.pkt:5: z\tstale");

    private static List<String> page(String... rows) {
        final List<String> page = new ArrayList<>(List.of(
            "| scripts | 3 |", "| Linux passes | 2 |", "| Tern passes | 1 |", "| same outcome on both | 2 |",
            "| both fail at the same line (stale) | 1 |",
            "| Tern passes, of those Linux passes | 1 |",
            "| Tern defect | 1 |", "| deliberate deviation | 0 |", "| needs IPv6 | 0 |", "| out of reach | 1 |",
            "| runner gap | 0 |"));
        page.addAll(List.of(rows));
        return page;
    }

    @Test
    void aConsistentPageHasNoProblems() {
        assertEquals(List.of(), problems(page(
            "| `b.pkt` | pass | Tern defect | why |", "| `c.pkt` | fail | out of reach | why |"), TSV));
    }

    @Test
    void aNonPassingScriptWithoutARowFails() {
        final List<String> problems = problems(page("| `b.pkt` | pass | Tern defect | why |"), TSV);
        assertTrue(problems.stream().anyMatch(p -> p.contains("no row classifies c.pkt")), problems.toString());
    }

    @Test
    void aRowForAPassingOrUnknownScriptFails() {
        final List<String> problems = problems(page("| `b.pkt` | pass | Tern defect | why |",
            "| `c.pkt` | fail | out of reach | why |", "| `a.pkt` | pass | runner gap | why |",
            "| `d.pkt` | pass | runner gap | why |"), TSV);
        assertTrue(problems.stream().anyMatch(p -> p.contains("a.pkt passes on Tern")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("d.pkt is not in the raw results")), problems.toString());
    }

    @Test
    void countsThatDifferFromTheRowsFail() {
        final List<String> problems = problems(page("| `b.pkt` | pass | Tern defect | why |",
            "| `c.pkt` | fail | Tern defect | why |"), TSV);
        assertTrue(problems.stream().anyMatch(p -> p.contains("the counts say 1 Tern defect, the table has 2")),
            problems.toString());
        final List<String> summary = new ArrayList<>(page(
            "| `b.pkt` | pass | Tern defect | why |", "| `c.pkt` | fail | out of reach | why |"));
        summary.set(1, "| Linux passes | 3 |");
        assertTrue(problems(summary, TSV).stream().anyMatch(p -> p.contains("the summary says Linux passes 3")));
    }

    @Test
    void anUnknownClassOrAWrongKernelResultFails() {
        final List<String> problems = problems(page("| `b.pkt` | fail | Tern bug | why |",
            "| `c.pkt` | fail | out of reach | why |"), TSV);
        assertTrue(problems.stream().anyMatch(p -> p.contains("class 'Tern bug'")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("says Linux fail, the run recorded pass")),
            problems.toString());
        assertFalse(problems(page("| `b.pkt` | pass | Tern defect | why |",
            "| `c.pkt` | fail | out of reach | why |"), TSV).stream().anyMatch(p -> p.contains("class")));
    }
}
