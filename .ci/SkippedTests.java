import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Fails when a test skipped that {@code .ci/allowed-skips} does not name, or when a line there matched no skipped
 * test. Reads every module's surefire reports after {@code ./tern test}; run as {@code java .ci/SkippedTests.java ROOT}.
 * A skip under CI is either on demand (listed) or a fault, since CI installs every tool the tests use.
 */
public final class SkippedTests {
    public static void main(String[] args) throws Exception {
        final Path root = Path.of(args.length > 0 ? args[0] : ".");
        final Map<String, String> allowed = new LinkedHashMap<>(); // CLASS or CLASS#METHOD -> why
        for (String line : Files.readAllLines(root.resolve(".ci/allowed-skips"))) {
            final String entry = line.strip();
            if (!entry.isEmpty() && !entry.startsWith("#")) {
                final String[] parts = entry.split("\\s+", 2);
                allowed.put(parts[0], parts.length > 1 ? parts[1] : "");
            }
        }
        final List<String> unexpected = new ArrayList<>();
        final Map<String, Integer> matched = new LinkedHashMap<>();
        int skipped = 0;
        for (Path report : reports(root)) {
            final NodeList cases = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(report.toFile())
                .getElementsByTagName("testcase");
            for (int i = 0; i < cases.getLength(); i++) {
                final Element testCase = (Element) cases.item(i);
                final NodeList skips = testCase.getElementsByTagName("skipped");
                if (skips.getLength() == 0) {
                    continue;
                }
                skipped++;
                final String className = testCase.getAttribute("classname");
                final String method = testCase.getAttribute("name").replaceFirst("[(\\[].*$", "");
                final String key = allowed.containsKey(className + "#" + method) ? className + "#" + method
                    : allowed.containsKey(className) ? className : null;
                if (key == null) {
                    unexpected.add(className + "#" + method + ": " + ((Element) skips.item(0)).getAttribute("message"));
                } else {
                    matched.merge(key, 1, Integer::sum);
                }
            }
        }
        final List<String> stale = allowed.keySet().stream().filter(k -> !matched.containsKey(k)).toList();
        System.err.printf("tern: %d tests skipped, %d of them on demand (.ci/allowed-skips)%n", skipped, skipped - unexpected.size());
        unexpected.forEach(u -> System.err.println("tern: skipped, not allowed: " + u));
        stale.forEach(s -> System.err.println("tern: .ci/allowed-skips names " + s + ", which did not skip: remove the line"));
        if (skipped == 0 && matched.isEmpty() && !allowed.isEmpty()) {
            System.err.println("tern: no surefire reports under " + root.toAbsolutePath() + ": did the tests run?");
            System.exit(1);
        }
        System.exit(unexpected.isEmpty() && stale.isEmpty() ? 0 : 1);
    }

    private static List<Path> reports(Path root) throws Exception {
        try (Stream<Path> modules = Files.list(root)) {
            final List<Path> reports = new ArrayList<>();
            for (Path dir : modules.map(m -> m.resolve("target/surefire-reports")).filter(Files::isDirectory).toList()) {
                try (Stream<Path> files = Files.list(dir)) {
                    files.filter(f -> f.getFileName().toString().matches("TEST-.*\\.xml")).sorted().forEach(reports::add);
                }
            }
            return reports;
        }
    }
}
