package dev.tern.nio;

import dev.tern.nio.examples.QuickStart;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The example behind docs/JAVA.md runs: two stacks in memory, UDP and TCP, no privilege needed (the README's own
 * quick start, the same exchange, is built from README.md itself by conformance's ReadmeQuickStartTest).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QuickStartTest {
    @Test
    void theInMemoryQuickStartPrintsTheDatagramAndTheEcho() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final PrintStream out = System.out;
        try {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            QuickStart.main(new String[0]);
        } finally {
            System.setOut(out);
        }
        final List<String> lines = printed.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(2, lines.size(), lines.toString());
        assertEquals("udp: 'hello over UDP' from /198.18.0.2:", lines.get(0).substring(0, lines.get(0).lastIndexOf(':') + 1));
        assertEquals("tcp: 'hello over TCP' echoed by /198.18.0.1:7", lines.get(1));
    }
}
