package dev.tern.stack;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The SYN sources' heavy-hitter table: who it names, when it names no one, and how its window slides. */
class SynSourcesTest {
    private static final int BASE = 0xC6120000; // 198.18.0.0
    private final SynSources sources = new SynSources();
    private final int[] heavy = new int[SynSources.MAX_HEAVY];

    private int[] heavy() {
        final int n = sources.heavy(heavy);
        final int[] found = Arrays.copyOf(heavy, n);
        Arrays.sort(found);
        return found;
    }

    @Test
    void oneSourceAmongManyClientsIsNamed() {
        final Random random = new Random(1);
        for (int i = 0; i < 10_000; i++) {
            sources.record(i % 10 == 0 ? BASE + 1 + random.nextInt(5_000) : BASE + 0x100);
        }
        assertArrayEquals(new int[] {BASE + 0x100}, heavy());
    }

    @Test
    void aFewSourcesAreNamedUpToEight() {
        for (int i = 0; i < 8_000; i++) {
            sources.record(BASE + (i % 8));
        }
        assertArrayEquals(new int[] {BASE, BASE + 1, BASE + 2, BASE + 3, BASE + 4, BASE + 5, BASE + 6, BASE + 7},
            heavy());
    }

    @Test
    void randomOrSpreadSourcesNameNoOne() {
        final Random random = new Random(2);
        for (int i = 0; i < 100_000; i++) {
            sources.record(BASE | random.nextInt(1 << 17));
        }
        assertArrayEquals(new int[0], heavy());
        for (int i = 0; i < 10_000; i++) {
            sources.record(BASE + (i % 16)); // sixteen at a sixteenth each: none has an eighth
        }
        assertArrayEquals(new int[0], heavy());
    }

    @Test
    void twoHeavySourcesWithTooMuchElseAroundNameNoOne() {
        final Random random = new Random(3);
        for (int i = 0; i < 10_000; i++) {
            sources.record(i % 2 == 0 ? BASE + (i % 4) : BASE + 0x1000 + random.nextInt(50_000));
        }
        assertEquals(0, sources.heavy(heavy), "two sources carry half, not three quarters");
    }

    @Test
    void tooFewSynsNameNoOne() {
        for (int i = 0; i < SynSources.MIN_SYNS - 1; i++) {
            sources.record(BASE);
        }
        assertEquals(0, sources.heavy(heavy));
        sources.record(BASE);
        assertArrayEquals(new int[] {BASE}, heavy());
    }

    @Test
    void theWindowHalvesAndAForgottenSourceLeavesTheOthers() {
        sources.advance(0);
        for (int i = 0; i < 1_000; i++) {
            sources.record(BASE);
        }
        sources.advance(SynSources.WINDOW_NS);
        assertEquals(500, sources.total());
        sources.advance(3 * SynSources.WINDOW_NS);
        assertEquals(125, sources.total());
        for (int i = 0; i < 100; i++) {
            sources.record(BASE + 9);
        }
        sources.forget(BASE);
        assertEquals(100, sources.total());
        assertArrayEquals(new int[] {BASE + 9}, heavy());
        sources.advance(100 * SynSources.WINDOW_NS);
        assertEquals(0, sources.heavy(heavy), "a quiet second later the table is empty");
    }
}
