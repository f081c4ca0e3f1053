import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads every module's surefire reports after a whole {@code ./tern test} under CI and fails when the run says less
 * than it seems to: a test skipped that {@code .ci/allowed-skips} does not name (or a line there that matched no
 * skip), or a test that the RFC tables (docs/RFC9293.md, docs/RFC1122.md) cite as evidence that did not run, was
 * skipped or failed. Run as {@code java .ci/TestReports.java ROOT}.
 */
public final class TestReports {
    /** A test named as evidence in an RFC table row: {@code Class#method}, in backticks. */
    private static final Pattern EVIDENCE = Pattern.compile("`([A-Z][A-Za-z0-9_]*)#([a-zA-Z_][A-Za-z0-9_]*)`");
    private static final List<String> RFC_TABLES = List.of("docs/RFC9293.md", "docs/RFC1122.md");

    /** One test case of a report: its class (with nested classes after {@code $}), method, outcome and message. */
    record TestCase(String className, String method, String outcome, String message) {
        boolean namedBy(String simpleClass, String methodName) {
            final String simple = className.substring(className.lastIndexOf('.') + 1);
            return method.equals(methodName) && Set.of(simple.split("\\$")).contains(simpleClass);
        }
    }

    public static void main(String[] args) throws Exception {
        final Path root = Path.of(args.length > 0 ? args[0] : ".");
        final List<TestCase> cases = cases(root);
        if (cases.isEmpty()) {
            System.err.println("tern: no surefire reports under " + root.toAbsolutePath() + ": did the tests run?");
            System.exit(1);
        }
        final List<String> problems = new ArrayList<>();
        problems.addAll(skipProblems(root, cases));
        problems.addAll(evidenceProblems(root, cases));
        problems.forEach(p -> System.err.println("tern: " + p));
        System.exit(problems.isEmpty() ? 0 : 1);
    }

    static List<String> skipProblems(Path root, List<TestCase> cases) throws Exception {
        final Set<String> allowed = new LinkedHashSet<>(); // CLASS or CLASS#METHOD
        for (String line : Files.readAllLines(root.resolve(".ci/allowed-skips"))) {
            final String entry = line.strip();
            if (!entry.isEmpty() && !entry.startsWith("#")) {
                allowed.add(entry.split("\\s+", 2)[0]);
            }
        }
        final List<String> problems = new ArrayList<>();
        final Set<String> matched = new LinkedHashSet<>();
        int skipped = 0;
        for (TestCase c : cases) {
            if (!c.outcome().equals("skipped")) {
                continue;
            }
            skipped++;
            final String method = c.className() + "#" + c.method();
            if (allowed.contains(method)) {
                matched.add(method);
            } else if (allowed.contains(c.className())) {
                matched.add(c.className());
            } else {
                problems.add("skipped, not allowed: " + method + ": " + c.message());
            }
        }
        System.err.printf("tern: %d tests ran, %d skipped, %d of them on demand (.ci/allowed-skips)%n", cases.size(),
            skipped, skipped - problems.size());
        for (String entry : allowed) {
            if (!matched.contains(entry)) {
                problems.add(".ci/allowed-skips names " + entry + ", which did not skip: remove the line");
            }
        }
        return problems;
    }

    static List<String> evidenceProblems(Path root, List<TestCase> cases) throws Exception {
        final Map<String, Set<String>> subclasses = subclasses(root);
        final List<String> problems = new ArrayList<>();
        int cited = 0;
        for (String table : RFC_TABLES) {
            final Set<String> named = new LinkedHashSet<>();
            for (String line : Files.readAllLines(root.resolve(table))) {
                if (line.startsWith("|")) {
                    final Matcher m = EVIDENCE.matcher(line);
                    while (m.find()) {
                        named.add(m.group(1) + "#" + m.group(2));
                    }
                }
            }
            cited += named.size();
            for (String test : named) {
                final String[] parts = test.split("#");
                // A test of an abstract class runs under the classes that extend it (ChannelBehaviour's, one per provider).
                final Set<String> runners = new LinkedHashSet<>(List.of(parts[0]));
                runners.addAll(subclasses.getOrDefault(parts[0], Set.of()));
                final List<TestCase> runs = cases.stream()
                    .filter(c -> runners.stream().anyMatch(r -> c.namedBy(r, parts[1]))).toList();
                final List<String> outcomes = runs.stream().map(TestCase::outcome).distinct().toList();
                if (runs.isEmpty()) {
                    problems.add(table + " cites " + test + ", which did not run");
                } else if (!outcomes.equals(List.of("passed"))) {
                    problems.add(table + " cites " + test + ", which " + String.join(" and ", outcomes) + " ("
                        + runs.size() + " runs)");
                }
            }
        }
        System.err.printf("tern: %d tests cited by the RFC tables, %d of them not passed%n", cited, problems.size());
        return problems;
    }

    /** Test classes by the class they extend, from every module's test sources (simple names). */
    static Map<String, Set<String>> subclasses(Path root) throws Exception {
        final Pattern extending = Pattern.compile("\\bclass\\s+(\\w+)\\s+extends\\s+(?:[\\w.]+\\.)?(\\w+)");
        final Map<String, Set<String>> subclasses = new LinkedHashMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().contains("/src/test/java/") && f.toString().endsWith(".java"))
                .toList()) {
                final Matcher m = extending.matcher(Files.readString(file));
                while (m.find()) {
                    subclasses.computeIfAbsent(m.group(2), k -> new LinkedHashSet<>()).add(m.group(1));
                }
            }
        }
        return subclasses;
    }

    static List<TestCase> cases(Path root) throws Exception {
        final List<TestCase> cases = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path dir : modules.map(m -> m.resolve("target/surefire-reports")).filter(Files::isDirectory).sorted().toList()) {
                try (Stream<Path> files = Files.list(dir)) {
                    for (Path report : files.filter(f -> f.getFileName().toString().matches("TEST-.*\\.xml")).sorted().toList()) {
                        final NodeList nodes = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                            .parse(report.toFile()).getElementsByTagName("testcase");
                        for (int i = 0; i < nodes.getLength(); i++) {
                            cases.add(testCase((Element) nodes.item(i)));
                        }
                    }
                }
            }
        }
        return cases;
    }

    private static TestCase testCase(Element e) {
        final String method = e.getAttribute("name").replaceFirst("[(\\[].*$", "");
        for (String outcome : List.of("skipped", "failure", "error")) {
            final NodeList found = e.getElementsByTagName(outcome);
            if (found.getLength() > 0) {
                return new TestCase(e.getAttribute("classname"), method, outcome.equals("skipped") ? "skipped" : "failed",
                    ((Element) found.item(0)).getAttribute("message"));
            }
        }
        return new TestCase(e.getAttribute("classname"), method, "passed", "");
    }
}
