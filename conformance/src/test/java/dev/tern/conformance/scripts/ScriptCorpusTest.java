package dev.tern.conformance.scripts;

import dev.tern.stack.script.ScriptProfile;
import dev.tern.stack.script.ScriptRunner;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Runs every packetdrill-format script in {@code conformance/scripts/} against Tern on virtual time, one test per
 * file, with the default profile (docs/SCRIPTS.md). A failing script fails with the runner's one-line message:
 * file:line, what the line expected and what Tern did.
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
            script.toUri(), () -> ScriptRunner.run(script, ScriptProfile.linux())));
    }
}
