package dev.tern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static dev.tern.cli.TernCommandLineTest.tern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code tern script}: statuses and messages (the runner's own behaviour is tested in stack). */
class ScriptCommandTest {
    private static final String OPEN = """
        0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
        +0    bind(3, ..., ...) = 0
        +0    listen(3, 1) = 0
        +0    < S 0:0(0) win 65535 <mss 1460>
        """;

    @TempDir
    Path dir;

    private Path script(String name, String text) throws IOException {
        final Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    @Test
    void passingScriptsExitZeroAndSayPass() throws IOException {
        final Path a = script("a.pkt", OPEN + "+0 > S. 0:0(0) ack 1 win 65535 <mss 1460>\n");
        final Path b = script("b.pkt", OPEN + "+0 > S. 0:0(0) ack 1 <mss 1460>\n+0 < R 1:1(0) win 0\n");
        final TernCommandLineTest.Run run = tern("script", a.toString(), b.toString());
        assertEquals(0, run.status(), run.err());
        assertEquals("pass " + a + "\npass " + b + "\n", run.out());
        assertEquals("", run.err());
    }

    @Test
    void aFailingScriptIsOneLineWithFileAndLineAndStatusOne() throws IOException {
        final Path good = script("good.pkt", OPEN + "+0 > S. 0:0(0) ack 1 <mss 1460>\n");
        final Path bad = script("bad.pkt", OPEN + "+0 > S. 0:0(0) ack 1 <mss 1000>\n");
        final TernCommandLineTest.Run run = tern("script", bad.toString(), good.toString());
        assertEquals(1, run.status());
        assertEquals("pass " + good + "\n", run.out(), "every file runs");
        assertEquals("tern: script: " + bad + ":5: expected 'S. 0:0(0) ack 1 <mss 1000>'; Tern sent "
            + "'S. 0:0(0) ack 1 win 65535 <mss 1460>' at 0.000000 s: mss 1460, not 1000\n", run.err());
    }

    @Test
    void defineGivesTheScriptsSymbolsAndConditionals() throws IOException {
        final Path file = script("d.pkt", """
            0     socket(..., SOCK_STREAM, IPPROTO_TCP) = FD
            #ifdef CHECKED
            +0    close(FD) = 0
            #endif
            """);
        assertEquals(0, tern("script", "--define", "FD=3", file.toString()).status());
        assertEquals(0, tern("script", "-D", "FD=3", "--define=CHECKED", file.toString()).status());
        final TernCommandLineTest.Run notANumber = tern("script", "-D", "FD=3", "--define", "FD=x", file.toString());
        assertEquals(1, notANumber.status(), "the last definition counts");
        assertTrue(notANumber.err().startsWith("tern: script: " + file + ":1: "), notANumber.err());
        final TernCommandLineTest.Run bad = tern("script", "--define", "=3", file.toString());
        assertEquals(2, bad.status());
        assertTrue(bad.err().contains("script: bad definition '=3': write NAME=VALUE or NAME"), bad.err());
    }

    @Test
    void theBareProfileOffersNoOptionsAndVerbosePrintsTernsSegments() throws IOException {
        final Path file = script("c.pkt", """
            0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
            +0    fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
            +0    connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
            +0    > S 0:0(0) <mss 1460>
            """);
        final TernCommandLineTest.Run run = tern("script", "--profile", "bare", "--verbose", file.toString());
        assertEquals(0, run.status(), run.err());
        assertTrue(run.out().startsWith("0.000000 > 'S "), run.out());
        assertEquals(1, tern("script", file.toString()).status(), "the linux profile offers more options");
    }
}
