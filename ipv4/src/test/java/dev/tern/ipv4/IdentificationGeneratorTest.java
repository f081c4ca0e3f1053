package dev.tern.ipv4;

import dev.tern.ipv4.wire.IpProtocol;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** IPv4 identification values (RFC 6864, RFC 7739 §5.3): per-tuple sequences that others cannot observe or guess. */
class IdentificationGeneratorTest {
    private static final int US = 0xC612_0002;
    private static final int UDP = IpProtocol.UDP;

    @Test
    void anObserverOfOneDestinationCannotCountDatagramsSentToAnother() {
        // The idle-scan property (RFC 7739 §4): what A sees moves by one per datagram sent to A, whatever went to B.
        qt().forAll(longs().all(), integers().all(), integers().all(), integers().between(1, 3000))
            .assuming((key, a, b, sentToB) -> a.intValue() != b.intValue()
                && new IdentificationGenerator(key, ~key).bucket(US, a, UDP)
                != new IdentificationGenerator(key, ~key).bucket(US, b, UDP))
            .checkAssert((key, a, b, sentToB) -> {
                final IdentificationGenerator ids = new IdentificationGenerator(key, ~key);
                final int first = ids.next(US, a, UDP);
                for (int i = 0; i < sentToB; i++) {
                    ids.next(US, b, UDP);
                }
                assertEquals((first + 1) & 0xFFFF, ids.next(US, a, UDP), "A's sequence moved while only B was sent to");
            });
    }

    @Test
    void twoDestinationsShareACounterOnlyAsOftenAsTheBucketCountSays() {
        // The property above excludes pairs in one bucket; they must be as rare as 1 in 2048, for every key.
        final SplittableRandom random = new SplittableRandom(7);
        for (int round = 0; round < 4; round++) {
            final IdentificationGenerator ids = new IdentificationGenerator(random.nextLong(), random.nextLong());
            int shared = 0;
            final int pairs = 200_000;
            for (int i = 0; i < pairs; i++) {
                if (ids.bucket(US, random.nextInt(), UDP) == ids.bucket(US, random.nextInt(), UDP)) {
                    shared++;
                }
            }
            final double expected = (double) pairs / IdentificationGenerator.BUCKETS; // about 98
            assertTrue(shared > expected / 2 && shared < expected * 2, shared + " pairs shared a bucket");
        }
    }

    @Test
    void theSameDestinationHasDifferentIdsUnderDifferentKeys() {
        qt().forAll(longs().all(), integers().all()).checkAssert((key, destination) -> {
            final int[] firsts = new int[8];
            for (int k = 0; k < firsts.length; k++) {
                firsts[k] = new IdentificationGenerator(key + k, key).next(US, destination, UDP);
            }
            assertTrue(Arrays.stream(firsts).distinct().count() > 1, "the key decides where a sequence starts");
        });
    }

    @Test
    void idsToOneTupleNeverRepeatWithinAnyWindowOf32768Datagrams() {
        // Reassembly needs an ID unique per (source, destination, protocol) for the datagram's lifetime (RFC 6864
        // §4.1): no repeat among any 2^15 consecutive datagrams, whatever else the stack sends meanwhile, including
        // to destinations that share the tuple's counter.
        qt().withExamples(12).forAll(longs().all(), integers().between(2, 6)).checkAssert((seed, destinations) -> {
            final Random random = new Random(seed);
            final IdentificationGenerator ids = new IdentificationGenerator(random.nextLong(), random.nextLong());
            final int[] addresses = new int[destinations];
            addresses[0] = random.nextInt();
            for (int i = 1; i < destinations; i++) {
                addresses[i] = random.nextInt();
            }
            // Make the second destination share the first one's counter, the hardest case.
            final int bucket = ids.bucket(US, addresses[0], UDP);
            while (ids.bucket(US, addresses[1], UDP) != bucket || addresses[1] == addresses[0]) {
                addresses[1] = random.nextInt();
            }
            final int[][] lastSeen = new int[destinations][65536];
            for (int[] seen : lastSeen) {
                Arrays.fill(seen, -(1 << 20)); // "never": further back than any window
            }
            final int window = 1 << 15;
            for (int sent = 0; sent < 3 * window; sent++) {
                final int d = random.nextInt(destinations);
                final int id = ids.next(US, addresses[d], UDP);
                assertTrue(sent - lastSeen[d][id] >= window,
                    "ID " + id + " to destination " + d + " again after " + (sent - lastSeen[d][id]) + " datagrams");
                lastSeen[d][id] = sent;
            }
        });
    }

    @Test
    void oneDestinationAloneGoesThroughAll65536IdsBeforeARepeat() {
        final IdentificationGenerator ids = new IdentificationGenerator(3, 4);
        final boolean[] seen = new boolean[65536];
        for (int i = 0; i < 65536; i++) {
            final int id = ids.next(US, 0xC612_0001, UDP);
            assertTrue(!seen[id], "repeat after " + i);
            seen[id] = true;
        }
    }

    @Test
    void aTsoBurstReservesOneIdPerSegment() {
        final IdentificationGenerator ids = new IdentificationGenerator(5, 6);
        final int first = ids.reserve(US, 0xC612_0001, IpProtocol.TCP, 10);
        assertEquals((first + 10) & 0xFFFF, ids.next(US, 0xC612_0001, IpProtocol.TCP));
    }

    @Test
    void theProtocolIsPartOfTheTuple() {
        final IdentificationGenerator ids = new IdentificationGenerator(8, 9);
        assertNotEquals(ids.next(US, 0xC612_0001, IpProtocol.TCP), ids.next(US, 0xC612_0001, IpProtocol.UDP));
    }
}
