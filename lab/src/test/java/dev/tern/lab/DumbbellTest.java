package dev.tern.lab;

import dev.tern.lab.link.QueueLimit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DumbbellTest {
    @Test
    void oneCubicFlowFillsTheLinkAndTheRunIsReproducible() {
        final ScenarioSpec spec = Specs.dumbbell("one", 20_000_000, 20 * Specs.MS, QueueLimit.ofBytes(100_000),
            DisciplineSpec.dropTail(), 0, 5 * Specs.S, Specs.bulk(1, "cubic", false));
        final ScenarioResult first = Dumbbell.run(spec, null);
        assertTrue(first.utilisation() > 0.85, "utilisation " + first.utilisation());
        final FlowResult flow = first.flows().getFirst();
        assertTrue(flow.rttP50Us() >= 20_000 && flow.rttP99Us() <= 20_000 + 100_000 * 8 / 20 + 2_000,
            "RTT between the base and base + a full queue: " + flow);
        final ScenarioResult second = Dumbbell.run(spec, null);
        assertEquals(first.fingerprint(), second.fingerprint());
        assertEquals(first.flows(), second.flows());
        final ScenarioSpec otherSeed = new ScenarioSpec("one", 2, spec.durationNs(), spec.rate(), spec.rateText(),
            spec.forwardDelayNs(), spec.reverseDelayNs(), spec.queue(), spec.discipline(), spec.loss(), spec.lossText(),
            spec.outages(), spec.flows());
        assertNotEquals(first.fingerprint(), Dumbbell.run(otherSeed, null).fingerprint(), "the seed reaches the stacks");
    }

    /**
     * {@code --pcap}: one file per flow, each frame as the router passed it on, in time order: the first frame of the
     * data direction is the SYN to the receiver's port, the first of the other direction the SYN-ACK from it; the
     * run itself (its fingerprint) is the same with the capture as without.
     */
    @Test
    void thePcapOfEachFlowHoldsItsOwnFramesInTimeOrder(@TempDir Path dir) throws Exception {
        final ScenarioSpec spec = Specs.dumbbell("cap", 5_000_000, 20 * Specs.MS, QueueLimit.ofPackets(30),
            DisciplineSpec.dropTail(), 0, 1 * Specs.S, Specs.bulk(2, "cubic", false));
        final ScenarioResult captured = Dumbbell.run(spec, null, dir);
        assertEquals(Dumbbell.run(spec, null).fingerprint(), captured.fingerprint());
        for (int flow = 0; flow < 2; flow++) {
            final ByteBuffer pcap = ByteBuffer.wrap(Files.readAllBytes(dir.resolve("cap-flow" + flow + ".pcap")))
                .order(ByteOrder.nativeOrder());
            assertEquals(0xa1b2_3c4d, pcap.getInt(0));
            final ByteBuffer frames = pcap.duplicate().order(ByteOrder.BIG_ENDIAN);
            long lastNs = 0;
            int toReceiver = 0;
            int toSender = 0;
            final Set<Integer> senderPorts = new HashSet<>();
            for (int at = 24; at < pcap.limit(); ) {
                final long ns = pcap.getInt(at) * 1_000_000_000L + pcap.getInt(at + 4);
                final int length = pcap.getInt(at + 8);
                assertTrue(ns >= lastNs, "time order");
                lastNs = ns;
                final int frame = at + 16;
                if ((pcap.get(frame + 12) & 0xFF) == 0x08 && pcap.get(frame + 13) == 0 && pcap.get(frame + 23) == 6) {
                    final int source = frames.getShort(frame + 34) & 0xFFFF;
                    final int destination = frames.getShort(frame + 36) & 0xFFFF;
                    final int flags = pcap.get(frame + 47) & 0xFF;
                    if (destination == 5001) {
                        assertTrue(toReceiver > 0 || flags == 0x02, "the first data-direction segment is the SYN");
                        senderPorts.add(source);
                        toReceiver++;
                    } else {
                        assertEquals(5001, source);
                        assertTrue(toSender > 0 || flags == 0x12, "the first segment back is the SYN-ACK");
                        toSender++;
                    }
                }
                at = frame + length;
            }
            assertEquals(1, senderPorts.size(), "one connection per file");
            assertTrue(toReceiver > 100 && toSender > 50, toReceiver + " data, " + toSender + " back");
            assertTrue(lastNs <= 1_000_000_000L && lastNs > 900_000_000L, "virtual time from 0: " + lastNs);
        }
    }
}
