package dev.tern.tcp;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

/** The 4-tuple table against a HashMap, with deletions that shift probe chains back. */
class ConnectionTableTest {
    @Test
    void agreesWithAHashMapUnderRandomPutsAndRemoves() {
        qt().withExamples(100).forAll(longs().all()).checkAssert(seed -> {
            final SplittableRandom random = new SplittableRandom(seed);
            final ConnectionTable table = new ConnectionTable(64, seed);
            final Map<Long, Integer> model = new HashMap<>();
            final long[] keys = new long[96];
            for (int i = 0; i < keys.length; i++) {
                // Few distinct addresses and ports: many collisions of the low bits.
                keys[i] = ConnectionTable.key(0xC6120001 + random.nextInt(3), 80 + random.nextInt(4), 49152 + i);
            }
            for (int step = 0; step < 2000; step++) {
                final long key = keys[random.nextInt(keys.length)];
                if (random.nextBoolean() && model.size() < 64) {
                    final int value = random.nextInt(1 << 20);
                    assertEquals(!model.containsKey(key), table.put(key, value));
                    model.putIfAbsent(key, value);
                } else {
                    final Integer removed = model.remove(key);
                    assertEquals(removed == null ? -1 : removed, table.remove(key));
                }
                assertEquals(model.size(), table.size());
                for (long k : keys) {
                    assertEquals(model.getOrDefault(k, -1), table.get(k));
                }
            }
        });
    }
}
