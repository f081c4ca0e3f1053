package dev.tern.conformance.docs;

import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/MEASUREMENTS.md keeps every figure with what produced it: each {@code ###} entry lists
 * {@code - Command: ...}, {@code - Measured: [recorded in] COMMIT on YYYY-MM-DD} and one or more
 * {@code - Raw: [name](measurements/...)}. This test fails when an entry lacks one of them, when a raw file it links
 * does not exist, when a commit it names is not a commit of this repository, when a raw output under
 * docs/measurements/ has no entry, or when the page's prose grows lines over 200 characters or labels a figure by an
 * issue number instead of what it measures.
 *
 * <p>Reads the files only; the commit check runs {@code git cat-file -e} in the repository root (a fresh clone, as
 * CI makes, has the history), and is skipped where git or the history is not there.
 */
class MeasurementsTest {
    private static final Pattern FIELD = Pattern.compile("^- (Command|Measured|Raw): (.*)$");
    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern HASH = Pattern.compile("[0-9a-f]{7,40}");
    /** One "measured" part: optional "recorded in", commits joined by ", " or " and ", then " on " and a date. */
    private static final Pattern MEASURED = Pattern.compile(
        "(?:recorded in )?([0-9a-f]{7,40}(?:(?:, | and )[0-9a-f]{7,40})*) on (\\d{4}-\\d{2}-\\d{2})");
    private static final Pattern ISSUE_NUMBER = Pattern.compile("(?i)\\bissues? \\d+");
    private static final int MAX_PROSE_LINE = 200;

    /** One {@code ###} entry of the page: its heading's line number and the fields under it. */
    record Entry(String heading, int line, List<String> commands, List<String> measured, List<String> rawLinks) {
        String where() {
            return "MEASUREMENTS.md:" + line + " \"" + heading + "\"";
        }
    }

    static Path root() {
        final String configured = System.getProperty("tern.root");
        return Path.of(configured != null ? configured : "..").toAbsolutePath().normalize();
    }

    static Path page() {
        return root().resolve("docs/MEASUREMENTS.md");
    }

    static List<String> lines() throws IOException {
        return Files.readAllLines(page(), StandardCharsets.UTF_8);
    }

    static List<Entry> entries(List<String> lines) {
        final List<Entry> entries = new ArrayList<>();
        Entry current = null;
        boolean inCode = false;
        for (int i = 0; i < lines.size(); i++) {
            final String line = lines.get(i);
            if (line.startsWith("```")) {
                inCode = !inCode;
                continue;
            }
            if (inCode) {
                continue;
            }
            if (line.startsWith("### ")) {
                current = new Entry(line.substring(4).strip(), i + 1, new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
                entries.add(current);
            } else if (line.startsWith("## ") || line.startsWith("# ")) {
                current = null;
            } else if (current != null) {
                final Matcher field = FIELD.matcher(line);
                if (field.matches()) {
                    final String value = field.group(2).strip();
                    switch (field.group(1)) {
                        case "Command" -> current.commands().add(value);
                        case "Measured" -> current.measured().add(value);
                        default -> {
                            final Matcher link = LINK.matcher(value);
                            boolean any = false;
                            while (link.find()) {
                                current.rawLinks().add(link.group(1));
                                any = true;
                            }
                            if (!any) {
                                current.rawLinks().add("");
                            }
                        }
                    }
                }
            }
        }
        return entries;
    }

    /** The commits a "Measured:" value names, or an empty list when it does not have the shape. */
    static List<String> commits(String measured) {
        final List<String> commits = new ArrayList<>();
        for (String part : measured.split("; ")) {
            final Matcher m = MEASURED.matcher(part.strip());
            if (!m.matches()) {
                return List.of();
            }
            final Matcher hash = HASH.matcher(m.group(1));
            while (hash.find()) {
                commits.add(hash.group());
            }
        }
        return commits;
    }

    @Test
    void thePageHasEntries() throws IOException {
        assertTrue(entries(lines()).size() >= 10, "docs/MEASUREMENTS.md should hold its ### entries");
    }

    @Test
    void everyEntryNamesItsCommandCommitAndRawOutput() throws IOException {
        final List<String> problems = new ArrayList<>();
        for (Entry entry : entries(lines())) {
            if (entry.commands().size() != 1 || entry.commands().getFirst().isEmpty()) {
                problems.add(entry.where() + ": wants one \"- Command: ...\" line, has " + entry.commands().size());
            }
            if (entry.measured().size() != 1) {
                problems.add(entry.where() + ": wants one \"- Measured: COMMIT on YYYY-MM-DD\" line, has "
                    + entry.measured().size());
            } else if (commits(entry.measured().getFirst()).isEmpty()) {
                problems.add(entry.where() + ": \"Measured: " + entry.measured().getFirst()
                    + "\" is not \"[recorded in] COMMIT on YYYY-MM-DD\"");
            }
            if (entry.rawLinks().isEmpty()) {
                problems.add(entry.where() + ": wants at least one \"- Raw: [name](measurements/...)\" line");
            } else if (entry.rawLinks().contains("")) {
                problems.add(entry.where() + ": a \"Raw:\" line without a link");
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void everyRawFileLinkedExistsUnderMeasurements() throws IOException {
        final Path docs = page().getParent();
        final Path measurements = docs.resolve("measurements").normalize();
        final List<String> problems = new ArrayList<>();
        for (Entry entry : entries(lines())) {
            for (String link : entry.rawLinks()) {
                if (link.isEmpty()) {
                    continue;
                }
                final Path file = docs.resolve(link).normalize();
                if (!file.startsWith(measurements)) {
                    problems.add(entry.where() + ": raw output " + link + " is not under docs/measurements/");
                } else if (!Files.isRegularFile(file)) {
                    problems.add(entry.where() + ": raw output " + link + " does not exist");
                }
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void everyRawOutputUnderMeasurementsHasAnEntry() throws IOException {
        final Path docs = page().getParent();
        final Set<Path> linked = new HashSet<>();
        for (Entry entry : entries(lines())) {
            for (String link : entry.rawLinks()) {
                if (!link.isEmpty()) {
                    linked.add(docs.resolve(link).normalize());
                }
            }
        }
        final List<String> orphans;
        try (Stream<Path> files = Files.walk(docs.resolve("measurements"))) {
            orphans = files.filter(p -> p.getFileName().toString().endsWith(".txt"))
                .map(Path::normalize)
                .filter(p -> !linked.contains(p))
                .map(p -> docs.relativize(p).toString())
                .sorted()
                .toList();
        }
        assertTrue(orphans.isEmpty(), "raw outputs no entry of MEASUREMENTS.md links:\n" + String.join("\n", orphans));
    }

    @Test
    void everyCommitNamedIsACommitOfTheRepository() throws IOException, InterruptedException {
        if (git("rev-parse", "--git-dir") != 0) {
            ExternalTools.skip("no git repository at " + root());
        }
        final Set<String> named = new LinkedHashSet<>();
        for (Entry entry : entries(lines())) {
            for (String measured : entry.measured()) {
                named.addAll(commits(measured));
            }
        }
        final List<String> missing = new ArrayList<>();
        for (String commit : named) {
            if (git("cat-file", "-e", commit + "^{commit}") != 0) {
                missing.add(commit);
            }
        }
        assertTrue(missing.isEmpty(), "commits MEASUREMENTS.md names that are not commits of the repository: " + missing);
    }

    @Test
    void proseLinesStayUnder200CharactersOutsideCodeAndTables() throws IOException {
        final List<String> lines = lines();
        final List<String> long_ = new ArrayList<>();
        boolean inCode = false;
        for (int i = 0; i < lines.size(); i++) {
            final String line = lines.get(i);
            if (line.startsWith("```")) {
                inCode = !inCode;
            } else if (!inCode && !line.startsWith("|") && line.codePointCount(0, line.length()) > MAX_PROSE_LINE) {
                long_.add("MEASUREMENTS.md:" + (i + 1) + " (" + line.length() + " characters)");
            }
        }
        assertTrue(long_.isEmpty(), "lines over " + MAX_PROSE_LINE + " characters:\n" + String.join("\n", long_));
    }

    @Test
    void figuresSayWhatTheyMeasureNotWhichIssueAskedForThem() throws IOException {
        final List<String> lines = lines();
        for (int i = 0; i < lines.size(); i++) {
            assertFalse(ISSUE_NUMBER.matcher(lines.get(i)).find(),
                "MEASUREMENTS.md:" + (i + 1) + " names an issue number; say what the measurement is for");
        }
    }

    private static int git(String... args) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>(List.of("git", "-C", root().toString()));
        command.addAll(List.of(args));
        final Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException noGit) {
            return -1;
        }
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return -1;
        }
        return process.exitValue();
    }
}
