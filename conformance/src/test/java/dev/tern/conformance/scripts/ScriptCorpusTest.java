package dev.tern.conformance.scripts;

import dev.tern.script.ScriptException;
import dev.tern.script.ScriptIpVersion;
import dev.tern.script.ScriptProfile;
import dev.tern.script.ScriptRunner;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs every packetdrill-format script in {@code conformance/scripts/} against Tern on virtual time, one test per
 * file, with the {@code corpus} profile (docs/SCRIPTS.md: the default, linux, plus a segment after the last line
 * failing the script). A failing script fails with the runner's one-line message:
 * file:line, what the line expected and what Tern did.
 *
 * <p>{@code conformance/scripts/known-failures/} holds scripts that show a bug not fixed yet: each says in its first
 * line at which line it fails ({@code // known failure: line N}), and must fail there. When the bug is fixed the test
 * fails, saying so, and the script moves up to the corpus; nothing is skipped.
 */
class ScriptCorpusTest {
    static Path directory() {
        final String configured = System.getProperty("tern.scripts.dir");
        return configured != null ? Path.of(configured) : Path.of("scripts");
    }

    static List<Path> scripts() throws IOException {
        try (Stream<Path> files = Files.list(directory())) {
            return files.filter(p -> p.getFileName().toString().endsWith(".pkt")).sorted().toList();
        }
    }

    @TestFactory
    Stream<DynamicTest> everyScriptInTheCorpusPasses() throws IOException {
        final List<Path> scripts = scripts();
        assertFalse(scripts.isEmpty(), "no .pkt scripts in " + directory().toAbsolutePath());
        return scripts.stream().map(script -> DynamicTest.dynamicTest(script.getFileName().toString(),
            script.toUri(), () -> ScriptRunner.run(script, ScriptProfile.corpus())));
    }

    /** The corpus's scripts that are IPv4's own, with what ties them to it; every other one runs over IPv6 too. */
    private static final Map<String, String> IPV4_ONLY = Map.of(
        "dialect-mtu.pkt", "it gives --mtu=9000 and writes IPv4's MSS of it",
        "icmp-pmtu-unvalidated.pkt", "unreachable frag_needed, which ICMPv6 has as packet_too_big",
        "icmp-tcp.pkt", "unreachable frag_needed, which ICMPv6 has as packet_too_big",
        "icmp-types.pkt", "ICMP's queries and source quench, which ICMPv6 has not");

    @TestFactory
    Stream<DynamicTest> everyScriptButIpv4sOwnPassesOverIpv6Too() throws IOException {
        final List<Path> scripts = scripts().stream()
            .filter(p -> !IPV4_ONLY.containsKey(p.getFileName().toString())).toList();
        assertTrue(scripts().stream().map(p -> p.getFileName().toString()).toList()
            .containsAll(IPV4_ONLY.keySet()), "a script IPV4_ONLY names is gone from the corpus");
        return scripts.stream().map(script -> DynamicTest.dynamicTest(script.getFileName().toString(),
            script.toUri(), () -> ScriptRunner.run(script.toString(), Files.readString(script, StandardCharsets.UTF_8),
                ScriptProfile.corpus(), null, ScriptIpVersion.IPV6)));
    }

    private static final Pattern KNOWN_FAILURE = Pattern.compile("^// known failure: line (\\d+)");

    @TestFactory
    Stream<DynamicTest> everyKnownFailureStillFailsAtItsLine() throws IOException {
        final Path known = directory().resolve("known-failures");
        if (!Files.isDirectory(known)) {
            return Stream.empty();
        }
        final List<Path> scripts;
        try (Stream<Path> files = Files.list(known)) {
            scripts = files.filter(p -> p.getFileName().toString().endsWith(".pkt")).sorted().toList();
        }
        return scripts.stream().map(script -> DynamicTest.dynamicTest(script.getFileName().toString(), script.toUri(),
            () -> {
                final Matcher header = KNOWN_FAILURE.matcher(Files.readString(script));
                assertTrue(header.find(), script + " does not say where it fails: its first line must be "
                    + "'// known failure: line N'");
                final ScriptException e = assertThrows(ScriptException.class,
                    () -> ScriptRunner.run(script, ScriptProfile.corpus()),
                    script + " passes now: the bug it shows is fixed; move it to " + directory());
                assertEquals(Integer.parseInt(header.group(1)), e.line(), "it fails elsewhere: " + e.getMessage());
            }));
    }
}
