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
 * counts by class add up to the rows, and the summary's counts are the TSV's. Below {@link #FREEBSD_HEADING} a
 * second table classifies the FreeBSD suite's scripts by pattern: every script Tern does not pass in the committed
 * freebsd TSV matches exactly one row, every row matches the scripts it counts (at least one), and the counts by
 * class are the scripts'. Each rule is shown to fail on a page made to break it.
 */
class PublicSuitesTableTest {
    static final Set<String> CLASSES = Set.of(
        "Tern defect", "deliberate deviation", "needs IPv6", "out of reach", "runner gap");
    /** The link to the raw results; the first one on the page counts. */
    private static final Pattern RAW_TSV = Pattern.compile("\\]\\((measurements/suites/[^)\\s]*gtests[^)\\s]*\\.tsv)\\)");
    /** A row of the classification table: script, the kernel's result, class, why. */
    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+\\.pkt)` \\| ([a-z]+) \\| ([^|]+?) \\| (.*)\\|$");
    /** The heading above the FreeBSD suite's table; the gtests rules read the page above it only. */
    static final String FREEBSD_HEADING = "## FreeBSD scripts Tern does not pass";
    /** The link to the FreeBSD suite's raw results; the first one on the page counts. */
    private static final Pattern FREEBSD_TSV =
        Pattern.compile("\\]\\((measurements/suites/[^)\\s]*freebsd[^)\\s]*\\.tsv)\\)");
    /**
     * A row of the FreeBSD table: a glob on the script's path, `any` or a glob the first error's reason (what
     * follows FILE:LINE:) begins with, the number of scripts it covers, class, why.
     */
    private static final Pattern PATTERN_ROW =
        Pattern.compile("^\\| `([^`]+)` \\| (?:`([^`]+)`|any) \\| (\\d+) \\| ([^|]+?) \\| (.*)\\|$");
    /** FILE:LINE: before an error's reason. */
    private static final Pattern WHERE = Pattern.compile("^\\S*:\\d+: ");
    /** A row of the counts by class, or of the summary: a label and a whole number. */
    private static final Pattern COUNT = Pattern.compile("^\\| ([^|`]+?) \\| (\\d+) \\|$");

    /** One script's results in the TSV. */
    record Result(String linux, String tern, String agree) { }

    /** One row of the FreeBSD table: what it matches, how many scripts it says, its class, its line. */
    record PatternRow(Pattern script, Pattern reason, int count, String cls, int line) { }

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

    /** The first errors of the scripts Tern does not pass, by script, from a TSV (the header skipped). */
    static Map<String, String> notPassing(List<String> tsv) {
        final Map<String, String> errors = new LinkedHashMap<>();
        for (String line : tsv.subList(Math.min(1, tsv.size()), tsv.size())) {
            final String[] cells = line.split("\t", -1);
            if (!line.isBlank() && !cells[2].equals("pass")) {
                errors.put(cells[0], cells.length > 4 ? cells[4] : "");
            }
        }
        return errors;
    }

    /** A glob as a regular expression: `*` any run of characters (`/` too), `?` one, the rest as written. */
    static Pattern glob(String glob, boolean prefix) {
        final StringBuilder regex = new StringBuilder();
        for (char c : glob.toCharArray()) {
            regex.append(c == '*' ? ".*" : c == '?' ? "." : Pattern.quote(String.valueOf(c)));
        }
        return Pattern.compile(regex + (prefix ? ".*" : ""), Pattern.DOTALL);
    }

    /** The page above the FreeBSD heading, or all of it. */
    static List<String> gtestsPart(List<String> page) {
        final int at = page.indexOf(FREEBSD_HEADING);
        return at < 0 ? page : page.subList(0, at);
    }

    /** What is wrong with the FreeBSD table against the freebsd TSV, one line each; empty when nothing is. */
    static List<String> freebsdProblems(List<String> page, List<String> tsv) {
        final List<String> problems = new ArrayList<>();
        final int at = page.indexOf(FREEBSD_HEADING);
        if (at < 0) {
            problems.add("SUITES.md: no '" + FREEBSD_HEADING + "' section");
            return problems;
        }
        final List<PatternRow> rows = new ArrayList<>();
        final Map<String, Integer> stated = new LinkedHashMap<>();
        for (int i = at + 1; i < page.size(); i++) {
            final Matcher row = PATTERN_ROW.matcher(page.get(i));
            final Matcher count = COUNT.matcher(page.get(i));
            if (row.matches()) {
                final String cls = row.group(4).strip();
                if (!CLASSES.contains(cls)) {
                    problems.add("SUITES.md:" + (i + 1) + ": class '" + cls + "', not one of " + new TreeSet<>(CLASSES));
                }
                rows.add(new PatternRow(glob(row.group(1), false),
                    row.group(2) == null ? null : glob(row.group(2), true), Integer.parseInt(row.group(3)), cls, i + 1));
            } else if (count.matches()) {
                stated.put(count.group(1).strip(), Integer.parseInt(count.group(2)));
            }
        }
        final int[] matched = new int[rows.size()];
        final Map<String, Integer> byClass = new LinkedHashMap<>();
        final Map<String, String> errors = notPassing(tsv);
        for (Map.Entry<String, String> e : errors.entrySet()) {
            final String reason = WHERE.matcher(e.getValue()).replaceFirst("");
            final List<Integer> hits = new ArrayList<>();
            for (int r = 0; r < rows.size(); r++) {
                final PatternRow row = rows.get(r);
                if (row.script().matcher(e.getKey()).matches()
                    && (row.reason() == null || row.reason().matcher(reason).matches())) {
                    hits.add(r);
                    matched[r]++;
                }
            }
            if (hits.isEmpty()) {
                problems.add("SUITES.md: no FreeBSD row covers " + e.getKey() + " (" + reason + ")");
            } else if (hits.size() > 1) {
                problems.add("SUITES.md: " + e.getKey() + " matches " + hits.size() + " FreeBSD rows (lines "
                    + hits.stream().map(h -> String.valueOf(rows.get(h).line())).toList() + ")");
            } else {
                byClass.merge(rows.get(hits.get(0)).cls(), 1, Integer::sum);
            }
        }
        for (int r = 0; r < rows.size(); r++) {
            final PatternRow row = rows.get(r);
            if (matched[r] == 0) {
                problems.add("SUITES.md:" + row.line() + ": the FreeBSD row matches no script Tern does not pass");
            } else if (matched[r] != row.count()) {
                problems.add("SUITES.md:" + row.line() + ": the FreeBSD row says " + row.count() + " scripts, it matches "
                    + matched[r]);
            }
        }
        for (String cls : CLASSES) {
            final int scripts = byClass.getOrDefault(cls, 0);
            final Integer count = stated.get(cls);
            if (count == null || count != scripts) {
                problems.add("SUITES.md: the FreeBSD counts say " + count + " " + cls + ", the rows cover " + scripts);
            }
        }
        final int all = results(tsv).size();
        if (!Integer.valueOf(all).equals(stated.get("scripts"))) {
            problems.add("SUITES.md: the FreeBSD summary says scripts " + stated.get("scripts") + ", the raw results " + all);
        }
        if (!Integer.valueOf(all - errors.size()).equals(stated.get("Tern passes"))) {
            problems.add("SUITES.md: the FreeBSD summary says Tern passes " + stated.get("Tern passes")
                + ", the raw results " + (all - errors.size()));
        }
        return problems;
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
    static List<String> problems(List<String> whole, List<String> tsv) {
        final List<String> page = gtestsPart(whole);
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
        return tsv(page, RAW_TSV);
    }

    static List<String> tsv(List<String> page, Pattern link) throws IOException {
        for (String line : page) {
            final Matcher m = link.matcher(line);
            if (m.find()) {
                return Files.readAllLines(docs().resolve(m.group(1)), StandardCharsets.UTF_8);
            }
        }
        throw new AssertionError("SUITES.md links no raw results (" + link.pattern() + ")");
    }

    @Test
    void theFreebsdTableMatchesTheRawResults() throws IOException {
        final List<String> page = page();
        final List<String> tsv = tsv(page, FREEBSD_TSV);
        assertTrue(results(tsv).size() >= 700, "the raw results should hold the FreeBSD suite's IPv4 scripts");
        final List<String> problems = freebsdProblems(page, tsv);
        assertTrue(problems.isEmpty(), String.join("\n", problems));
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

    // The FreeBSD table's rules, on results and pages made to break them.

    private static final List<String> FREEBSD = List.of(
        "script\tlinux\ttern\tlinux_error\ttern_error\tagree",
        "a/one.pkt\tskipped\tpass\t\t\t-",
        "a/two.pkt\tskipped\tfail\t\ta/two.pkt:4: sysctl x=1 is not supported\t-",
        "b/three.pkt\tskipped\tfail\t\tb/three.pkt:9: expected 'F.'; Tern sent '.'\t-",
        "b/four.pkt\tskipped\tfail\t\tb/four.pkt:9: sysctl x=1 is not supported\t-");

    private static List<String> freebsdPage(String... rows) {
        final List<String> page = new ArrayList<>(List.of(FREEBSD_HEADING, "| scripts | 4 |", "| Tern passes | 1 |",
            "| Tern defect | 1 |", "| deliberate deviation | 2 |", "| needs IPv6 | 0 |", "| out of reach | 0 |",
            "| runner gap | 0 |"));
        page.addAll(List.of(rows));
        return page;
    }

    @Test
    void aConsistentFreebsdTableHasNoProblems() {
        assertEquals(List.of(), freebsdProblems(freebsdPage("| `*` | `sysctl x=1 ` | 2 | deliberate deviation | why |",
            "| `b/*` | `expected*` | 1 | Tern defect | why |"), FREEBSD));
    }

    @Test
    void aFreebsdScriptNoRowOrTwoRowsCoverFails() {
        final List<String> none = freebsdProblems(freebsdPage("| `*` | `sysctl x=1` | 2 | deliberate deviation | why |"),
            FREEBSD);
        assertTrue(none.stream().anyMatch(p -> p.contains("no FreeBSD row covers b/three.pkt")), none.toString());
        final List<String> two = freebsdProblems(freebsdPage("| `*` | `sysctl x=1` | 2 | deliberate deviation | why |",
            "| `b/*` | any | 2 | Tern defect | why |"), FREEBSD);
        assertTrue(two.stream().anyMatch(p -> p.contains("b/four.pkt matches 2 FreeBSD rows")), two.toString());
    }

    @Test
    void aFreebsdRowThatMatchesNothingOrMiscountsFails() {
        final List<String> problems = freebsdProblems(freebsdPage("| `*` | `sysctl x=1` | 3 | deliberate deviation | why |",
            "| `b/three.pkt` | any | 1 | Tern defect | why |", "| `c/*` | any | 1 | runner gap | why |"), FREEBSD);
        assertTrue(problems.stream().anyMatch(p -> p.contains("says 3 scripts, it matches 2")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("matches no script")), problems.toString());
    }

    @Test
    void freebsdCountsOrClassesThatDifferFail() {
        final List<String> page = freebsdPage("| `*` | `sysctl x=1` | 2 | out of reach | why |",
            "| `b/three.pkt` | any | 1 | Tern bug | why |");
        page.set(2, "| Tern passes | 2 |");
        final List<String> problems = freebsdProblems(page, FREEBSD);
        assertTrue(problems.stream().anyMatch(p -> p.contains("class 'Tern bug'")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("the FreeBSD counts say 0 out of reach, the rows cover 2")),
            problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.contains("says Tern passes 2, the raw results 1")),
            problems.toString());
    }
}
