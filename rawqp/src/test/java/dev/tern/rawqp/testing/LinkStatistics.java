package dev.tern.rawqp.testing;

import dev.tern.ethernet.link.Link;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reads a link's statistics the way the stack publishes them (an array sized by {@link Link#statisticNames()}, filled
 * by {@link Link#statistics(long[])}) and checks that names and values agree: the names are distinct counter names,
 * and the link writes every slot of an array that long (too short an array would throw, a slot left alone keeps
 * a sentinel). Test-only.
 */
public final class LinkStatistics {
    private static final long UNWRITTEN = 0x5A5A_5A5A_5A5A_5A5AL;

    private LinkStatistics() {
    }

    /** Name to value, in the link's order. */
    public static Map<String, Long> read(Link link) {
        final String[] names = link.statisticNames();
        final long[] values = new long[names.length];
        Arrays.fill(values, UNWRITTEN);
        link.statistics(values);
        final Map<String, Long> byName = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            assertTrue(names[i].matches("[a-z][a-z_]*(\\.[a-z][a-z_]*)*"), "counter name " + names[i]);
            assertNotEquals(UNWRITTEN, values[i], names[i] + " was not written");
            byName.put(names[i], values[i]);
        }
        assertEquals(names.length, byName.size(), "distinct names: " + Arrays.toString(names));
        return byName;
    }
}
