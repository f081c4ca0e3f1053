package dev.tern.lab.link;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LinkRateTest {
    private static final long MS = 1_000_000L;

    @Test
    void constantRateSerialisesAtBitsPerSecond() {
        final LinkRate rate = LinkRate.constant(10_000_000);
        assertEquals(1_200_000, rate.finishNs(0, 1500), "1500 bytes at 10 Mbit/s take 1.2 ms");
        assertEquals(5 + 800, rate.finishNs(5, 1), "rounded up to the next nanosecond");
        assertEquals(12_500_000, rate.capacityBytes(0, 10_000 * MS));
    }

    @Test
    void traceOpportunitiesCarryFifteenHundredFourBytesAndLoop() {
        final LinkRate rate = LinkRate.trace(new long[] {1, 1, 3});
        assertEquals(1 * MS, rate.finishNs(0, 1500));
        assertEquals(1 * MS, rate.finishNs(1 * MS, 1500), "four bytes left in the first, the rest in the second");
        assertEquals(3 * MS, rate.finishNs(1 * MS, 1500));
        assertEquals(4 * MS, rate.finishNs(3 * MS, 1500), "the trace repeats every 3 ms");
        assertEquals(10 * MS, rate.finishNs(10 * MS, 1500), "after idle: the first opportunity at or after the start");
        assertEquals(3 * 1504 * 2, rate.capacityBytes(0, 6 * MS + 1));
    }

    @Test
    void malformedTraceLineNamesFileAndLine(@TempDir Path dir) throws Exception {
        final Path file = dir.resolve("cell.trace");
        Files.writeString(file, "1\n2\nthree\n");
        final LabInputException e = assertThrows(LabInputException.class, () -> LinkRate.readTrace(file));
        assertEquals(file + ":3: not a millisecond timestamp: 'three'", e.getMessage());
        Files.writeString(file, "5\n4\n");
        assertEquals(file + ":2: timestamp 4 is before 5",
            assertThrows(LabInputException.class, () -> LinkRate.readTrace(file)).getMessage());
    }
}
