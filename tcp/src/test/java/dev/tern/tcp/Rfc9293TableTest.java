package dev.tern.tcp;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Keeps {@code docs/RFC9293.md} honest: every requirement ID of RFC 9293 Appendix B has exactly one row, every status
 * is a known one, every {@code Class#method} it names is a test method in some module's test sources, a row marked
 * met names at least one, and a MUST that is not met says why. The checker is also run on small bad tables, so it is
 * seen to fail.
 */
class Rfc9293TableTest {
    /** RFC 9293 Appendix B numbers its requirements without gaps: MUST-1..69, SHLD-1..31, MAY-1..18, REC-1. */
    static final Set<String> RFC9293_IDS = ids("MUST", 69, "SHLD", 31, "MAY", 18, "REC", 1);

    /**
     * RFC 1122's MUST and MUST NOT rows for IPv4, ICMP and UDP (its §3.5 and §4.1.5 summaries), as {@code
     * docs/RFC1122.md} numbers them (RFC 1122 has no IDs of its own): every row there is a MUST.
     */
    static final Set<String> RFC1122_IDS = ids("IP", 36, "ICMP", 25, "FRAG", 6, "BCAST", 3, "UDP", 14);

    static final Set<String> STATUSES = Set.of("met", "deviation", "not applicable", "not implemented");

    /** The IDs of RFC 9293's table and of RFC 1122's. */
    static final String RFC9293_ID = "(?:MUST|SHLD|MAY|REC)-\\d+";
    static final String RFC1122_ID = "(?:IP|ICMP|FRAG|BCAST|UDP)-\\d+";
    /** A test named as evidence: {@code Class#method}, in backticks. */
    private static final Pattern EVIDENCE = Pattern.compile("`([A-Z][A-Za-z0-9_]*)#([a-zA-Z_][A-Za-z0-9_]*)`");
    private static final Pattern TEST_ANNOTATION = Pattern.compile(
        "@(Test|Property|Example|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate|FuzzTest)\\b");
    /** A reason must say something: at least this many characters. */
    static final int MIN_REASON = 20;

    static Set<String> ids(Object... kindsAndCounts) {
        final Set<String> ids = new LinkedHashSet<>();
        for (int i = 0; i < kindsAndCounts.length; i += 2) {
            for (int n = 1; n <= (Integer) kindsAndCounts[i + 1]; n++) {
                ids.add(kindsAndCounts[i] + "-" + n);
            }
        }
        return ids;
    }

    /**
     * What is wrong with {@code table} (markdown) against the full list {@code ids}; {@code testExists} answers
     * whether {@code (Class, method)} is a test method. Empty when the table is honest.
     */
    static List<String> problems(String table, Set<String> ids, BiPredicate<String, String> testExists) {
        return problems(table, ids, RFC9293_ID, id -> id.startsWith("MUST-"), testExists);
    }

    /**
     * As {@link #problems(String, Set, BiPredicate)} for a table whose IDs match {@code idRegex}; {@code isMust} tells
     * the rows that need a reason when they are not met.
     */
    static List<String> problems(String table, Set<String> ids, String idRegex, Predicate<String> isMust,
                                 BiPredicate<String, String> testExists) {
        // A table row: | ID | description | status | evidence or reason |
        final Pattern rowPattern = Pattern.compile("^\\|\\s*(" + idRegex + ")\\s*\\|(.*)\\|\\s*$");
        final List<String> problems = new ArrayList<>();
        final Map<String, Integer> seen = new HashMap<>();
        int lineNumber = 0;
        for (String line : table.split("\n", -1)) {
            lineNumber++;
            final Matcher row = rowPattern.matcher(line);
            if (!row.matches()) {
                continue;
            }
            final String id = row.group(1);
            final String where = "line " + lineNumber + " (" + id + ")";
            final String[] cells = row.group(2).split("\\|", -1);
            if (cells.length != 3) {
                problems.add(where + ": expected 4 columns, found " + (cells.length + 1));
                continue;
            }
            if (seen.put(id, lineNumber) != null) {
                problems.add(where + ": a second row for " + id);
            }
            if (!ids.contains(id)) {
                problems.add(where + ": " + id + " is not a requirement ID of the list");
            }
            final String description = cells[0].strip();
            final String status = cells[1].strip();
            final String evidence = cells[2].strip();
            if (description.isEmpty()) {
                problems.add(where + ": no description");
            }
            if (!STATUSES.contains(status)) {
                problems.add(where + ": unknown status '" + status + "' (known: " + STATUSES + ")");
            }
            int named = 0;
            final Matcher test = EVIDENCE.matcher(evidence);
            while (test.find()) {
                named++;
                if (!testExists.test(test.group(1), test.group(2))) {
                    problems.add(where + ": " + test.group(1) + "#" + test.group(2) + " is not a test method");
                }
            }
            if (status.equals("met") && named == 0) {
                problems.add(where + ": marked met but names no test (Class#method in backticks)");
            }
            if (isMust.test(id) && !status.equals("met") && evidence.length() < MIN_REASON) {
                problems.add(where + ": a MUST that is not met needs a reason");
            }
        }
        for (String id : ids) {
            if (!seen.containsKey(id)) {
                problems.add(id + ": no row");
            }
        }
        return problems;
    }

    /** The order of the counts table's columns, after the kind. */
    static final List<String> COUNT_COLUMNS = List.of("met", "deviation", "not applicable", "not implemented");
    private static final Pattern COUNTS = Pattern.compile(
        "^\\|\\s*(?:([A-Z]+)\\s*\\|)?\\s*(\\d+)\\s*\\|\\s*(\\d+)\\s*\\|\\s*(\\d+)\\s*\\|\\s*(\\d+)\\s*\\|\\s*(\\d+)\\s*\\|\\s*$");

    /**
     * Where the counts table ({@code | KIND | met | deviation | not applicable | not implemented | total |}, KIND
     * left out for a table with one kind) disagrees with the rows; {@code kindOf} maps an ID to its KIND, or to null
     * for a table without kinds.
     */
    static List<String> countProblems(String table, String idRegex, java.util.function.Function<String, String> kindOf) {
        final Pattern rowPattern = Pattern.compile("^\\|\\s*(" + idRegex + ")\\s*\\|[^|]*\\|([^|]*)\\|");
        final Map<String, int[]> actual = new HashMap<>();
        final Map<String, int[]> claimed = new HashMap<>();
        for (String line : table.split("\n")) {
            final Matcher row = rowPattern.matcher(line);
            if (row.find()) {
                final int column = COUNT_COLUMNS.indexOf(row.group(2).strip());
                final int[] counts = actual.computeIfAbsent(String.valueOf(kindOf.apply(row.group(1))),
                    k -> new int[5]);
                if (column >= 0) {
                    counts[column]++;
                }
                counts[4]++;
                continue;
            }
            final Matcher counts = COUNTS.matcher(line);
            if (counts.matches()) {
                final int[] values = new int[5];
                for (int i = 0; i < 5; i++) {
                    values[i] = Integer.parseInt(counts.group(i + 2));
                }
                claimed.put(String.valueOf(counts.group(1)), values);
            }
        }
        final List<String> problems = new ArrayList<>();
        for (Map.Entry<String, int[]> kind : actual.entrySet()) {
            final int[] said = claimed.get(kind.getKey());
            if (said == null) {
                problems.add("counts: no line for " + kind.getKey());
            } else if (!java.util.Arrays.equals(said, kind.getValue())) {
                problems.add("counts for " + kind.getKey() + ": the table says " + java.util.Arrays.toString(said)
                    + ", the rows give " + java.util.Arrays.toString(kind.getValue()));
            }
        }
        return problems;
    }

    // ------------------------------------------------------------------------------------- the repository

    /** The repository root: the first directory upwards holding {@code docs/RFC9293.md}. */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("docs/RFC9293.md"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            fail("docs/RFC9293.md not found above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    /** Test methods of the repository's test sources, found by scanning them: class simple name to its sources. */
    static final class TestSources implements BiPredicate<String, String> {
        private final Map<String, List<Path>> byClass = new HashMap<>();
        private final Map<Path, String> text = new HashMap<>();

        TestSources(Path root) {
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> p.toString().replace('\\', '/').contains("/src/test/java/"))
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .forEach(p -> byClass.computeIfAbsent(p.getFileName().toString().replace(".java", ""),
                        k -> new ArrayList<>()).add(p));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public boolean test(String className, String method) {
            for (Path file : byClass.getOrDefault(className, List.of())) {
                final String source = text.computeIfAbsent(file, f -> {
                    try {
                        return Files.readString(f);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
                final Matcher declaration = Pattern.compile("\\bvoid\\s+" + Pattern.quote(method) + "\\s*\\(")
                    .matcher(source);
                while (declaration.find()) {
                    // The annotations between the previous member's end (a line ending in } or ;) and this
                    // declaration; an annotation's own braces, as in name = "{0}", end no line.
                    final int start = Math.max(source.lastIndexOf("}\n", declaration.start()),
                        source.lastIndexOf(";\n", declaration.start()));
                    if (TEST_ANNOTATION.matcher(source.substring(Math.max(start, 0), declaration.start())).find()) {
                        return true;
                    }
                }
            }
            return false;
        }
    }

    // ------------------------------------------------------------------------------------------- the tests

    @Test
    void theRfc9293TableHasARowForEveryRequirementAndHonestEvidence() throws IOException {
        final Path root = root();
        final String table = Files.readString(root.resolve("docs/RFC9293.md"));
        final List<String> problems = new ArrayList<>(problems(table, RFC9293_IDS, new TestSources(root)));
        problems.addAll(countProblems(table, RFC9293_ID, id -> id.substring(0, id.indexOf('-'))));
        assertTrue(problems.isEmpty(), "docs/RFC9293.md:\n  " + String.join("\n  ", problems));
    }

    @Test
    void theRfc1122TableHasARowForEveryListedRequirementAndHonestEvidence() throws IOException {
        final Path root = root();
        final String table = Files.readString(root.resolve("docs/RFC1122.md"));
        final List<String> problems = new ArrayList<>(
            problems(table, RFC1122_IDS, RFC1122_ID, id -> true, new TestSources(root)));
        problems.addAll(countProblems(table, RFC1122_ID, id -> null));
        assertTrue(problems.isEmpty(), "docs/RFC1122.md:\n  " + String.join("\n  ", problems));
    }

    @Test
    void inTheRfc1122TableEveryRowIsAMustSoEveryRowNotMetNeedsAReason() {
        assertEquals(List.of("line 1 (UDP-1): a MUST that is not met needs a reason", "UDP-2: no row"),
            problems("| UDP-1 | x | not implemented | |\n| MUST-1 | not an RFC 1122 ID | met | |", ids("UDP", 2),
                RFC1122_ID, id -> true, ONLY_FOO_BAR));
    }

    /** A script named as evidence: a path under conformance/scripts/, in backticks. */
    private static final Pattern SCRIPT = Pattern.compile("`(conformance/scripts/[A-Za-z0-9_./-]+\\.pkt)`");

    @Test
    void everyScriptTheTablesNameExists() throws IOException {
        final Path root = root();
        final List<String> missing = new ArrayList<>();
        int named = 0;
        for (String table : List.of("docs/RFC9293.md", "docs/RFC1122.md")) {
            final Matcher script = SCRIPT.matcher(Files.readString(root.resolve(table)));
            while (script.find()) {
                named++;
                if (!Files.isRegularFile(root.resolve(script.group(1)))) {
                    missing.add(table + ": " + script.group(1));
                }
            }
        }
        assertTrue(missing.isEmpty(),
            "scripts named as evidence that do not exist:\n  " + String.join("\n  ", missing));
        assertTrue(named > 0, "the tables name no script at all: has the evidence format changed?");
    }

    @Test
    void theRequirementListHasEveryIdOfAppendixB() {
        assertEquals(69 + 31 + 18 + 1, RFC9293_IDS.size());
        assertTrue(RFC9293_IDS.contains("MUST-69") && RFC9293_IDS.contains("SHLD-31") && RFC9293_IDS.contains("MAY-18")
            && RFC9293_IDS.contains("REC-1"));
    }

    /** The checker on small tables: IDs A-1, A-2 do not fit the row pattern, so these use MUST-1, MUST-2, MAY-1. */
    static final Set<String> SMALL = ids("MUST", 2, "MAY", 1);
    static final BiPredicate<String, String> ONLY_FOO_BAR = (c, m) -> c.equals("FooTest") && m.equals("bar");

    private static List<String> check(String... rows) {
        return problems("# t\n\n| ID | d | s | e |\n|---|---|---|---|\n" + String.join("\n", rows) + "\n", SMALL,
            ONLY_FOO_BAR);
    }

    @Test
    void anHonestSmallTablePasses() {
        assertEquals(List.of(), check(
            "| MUST-1 | one | met | `FooTest#bar` |",
            "| MUST-2 | two | deviation | we chose otherwise because of a measured reason |",
            "| MAY-1 | three | not implemented | |"));
    }

    @Test
    void aMissingRowFails() {
        assertEquals(List.of("MAY-1: no row"), check(
            "| MUST-1 | one | met | `FooTest#bar` |",
            "| MUST-2 | two | not applicable | there is nothing in Tern to apply it to |"));
    }

    @Test
    void anUnknownStatusFails() {
        final List<String> problems = check(
            "| MUST-1 | one | met | `FooTest#bar` |",
            "| MUST-2 | two | met | `FooTest#bar` |",
            "| MAY-1 | three | mostly | `FooTest#bar` |");
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("unknown status 'mostly'"), problems.toString());
    }

    @Test
    void metWithATestThatDoesNotExistFails() {
        final List<String> problems = check(
            "| MUST-1 | one | met | `FooTest#bar`, `FooTest#baz` |",
            "| MUST-2 | two | met | `NoSuchTest#bar` |",
            "| MAY-1 | three | met | `FooTest#bar` |");
        assertEquals(List.of(
            "line 5 (MUST-1): FooTest#baz is not a test method",
            "line 6 (MUST-2): NoSuchTest#bar is not a test method"), problems);
    }

    @Test
    void metWithoutAnyTestFails() {
        final List<String> problems = check(
            "| MUST-1 | one | met | works, trust us |",
            "| MUST-2 | two | met | `FooTest#bar` |",
            "| MAY-1 | three | met | `FooTest#bar` |");
        assertEquals(List.of("line 5 (MUST-1): marked met but names no test (Class#method in backticks)"), problems);
    }

    @Test
    void aMustNotMetWithoutAReasonFails() {
        final List<String> problems = check(
            "| MUST-1 | one | not implemented | |",
            "| MUST-2 | two | deviation | see above |",
            "| MAY-1 | three | not implemented | |");
        assertEquals(List.of(
            "line 5 (MUST-1): a MUST that is not met needs a reason",
            "line 6 (MUST-2): a MUST that is not met needs a reason"), problems);
    }

    @Test
    void aSecondRowOrAnUnknownIdFails() {
        final List<String> problems = check(
            "| MUST-1 | one | met | `FooTest#bar` |",
            "| MUST-1 | one again | met | `FooTest#bar` |",
            "| MUST-2 | two | met | `FooTest#bar` |",
            "| MUST-3 | three | met | `FooTest#bar` |",
            "| MAY-1 | three | met | `FooTest#bar` |");
        assertEquals(List.of(
            "line 6 (MUST-1): a second row for MUST-1",
            "line 8 (MUST-3): MUST-3 is not a requirement ID of the list"), problems);
    }

    @Test
    void theSourceScanFindsAnnotatedTestMethodsOnly() {
        final TestSources sources = new TestSources(root());
        assertTrue(sources.test("Rfc9293TableTest", "aMissingRowFails"));
        assertTrue(sources.test("OptionsTest", "anOptionWithZeroLengthEndsParsingButTheSegmentIsProcessed"),
            "a test in a nested class");
        assertTrue(sources.test("Ipv4InputTest", "optionsAreSkippedAndEthernetPaddingIgnored"), "another module");
        assertTrue(sources.test("Ipv4InputTest", "malformedDatagramsAreCountedAndDroppedNeverAnswered"),
            "a parameterized test whose annotation has braces");
        assertTrue(!sources.test("Rfc9293TableTest", "check"), "a helper is not a test");
        assertTrue(!sources.test("Rfc9293TableTest", "noSuchMethod"));
        assertTrue(!sources.test("NoSuchTest", "aMissingRowFails"));
    }

    @Test
    void countsThatDisagreeWithTheRowsFail() {
        final String table = String.join("\n",
            "| Kind | met | deviation | not applicable | not implemented | total |",
            "| MUST | 1 | 0 | 0 | 1 | 2 |",
            "| MAY | 1 | 0 | 0 | 0 | 1 |",
            "| MUST-1 | one | met | `FooTest#bar` |",
            "| MUST-2 | two | met | `FooTest#bar` |",
            "| MAY-1 | three | met | `FooTest#bar` |");
        assertEquals(List.of("counts for MUST: the table says [1, 0, 0, 1, 2], the rows give [2, 0, 0, 0, 2]"),
            countProblems(table, RFC9293_ID, id -> id.substring(0, id.indexOf('-'))));
        assertEquals(List.of("counts: no line for null"),
            countProblems("| UDP-1 | x | met | y |", RFC1122_ID, id -> null));
    }
}
