package dev.tern.ethernet.link;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MulticastMacSetTest {
    private static final long GROUP_A = 0x01005E000001L;
    private static final long GROUP_B = 0x01005E7F0001L;

    @Test
    void aMacLeavesOnlyWithItsLastReference() {
        final MulticastMacSet set = new MulticastMacSet();
        assertTrue(set.add(GROUP_A), "first reference: tell the filter");
        assertFalse(set.add(GROUP_A), "second reference: the filter already knows");
        assertFalse(set.remove(GROUP_A));
        assertTrue(set.contains(GROUP_A));
        assertTrue(set.remove(GROUP_A), "last reference");
        assertFalse(set.contains(GROUP_A));
        assertFalse(set.remove(GROUP_A), "removing what is not there changes nothing");
        assertEquals(0, set.size());
    }

    @Test
    void removingOneMacKeepsTheOthersWithTheirCounts() {
        final MulticastMacSet set = new MulticastMacSet();
        set.add(GROUP_A);
        set.add(GROUP_B);
        set.add(GROUP_B);
        assertTrue(set.remove(GROUP_A));
        assertTrue(set.contains(GROUP_B));
        assertFalse(set.remove(GROUP_B), "the moved entry kept its count of two");
        assertTrue(set.remove(GROUP_B));
    }

    @Test
    void agreesWithAReferenceCountingMapOverRandomJoinsAndLeaves() {
        final Random random = new Random(7);
        final MulticastMacSet set = new MulticastMacSet();
        final Map<Long, Integer> model = new HashMap<>();
        for (int step = 0; step < 20_000; step++) {
            final long mac = 0x01005E000000L | random.nextInt(40);
            if (random.nextBoolean()) {
                assertEquals(!model.containsKey(mac), set.add(mac));
                model.merge(mac, 1, Integer::sum);
            } else {
                final Integer count = model.get(mac);
                assertEquals(count != null && count == 1, set.remove(mac));
                if (count != null) {
                    if (count == 1) {
                        model.remove(mac);
                    } else {
                        model.put(mac, count - 1);
                    }
                }
            }
            assertEquals(model.size(), set.size());
            assertEquals(model.containsKey(mac), set.contains(mac));
        }
    }
}
