package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.stack.sim.Simulation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

class PingTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int B = Ipv4Address.parse("198.18.0.2");

    /** Replies seen by a pinger: sequence, data length, data intact. */
    private record Reply(int sequence, int length, boolean intact) {
    }

    private static List<Reply> collect(NetStack stack) {
        final List<Reply> replies = new ArrayList<>();
        stack.pinger().listener(new Pinger.Listener() {
            @Override
            public void onReply(int source, int sequence, int dataLength, int ttl, long roundTripNs, boolean intact) {
                replies.add(new Reply(sequence, dataLength, intact));
            }

            @Override
            public void onError(int reporter, int type, int code, int sequence) {
            }
        });
        return replies;
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 56, 1472, 1473, 2961, 8000, 60000, 65507})
    void echoDataComesBackIntactAtEverySize(int size) {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final List<Reply> replies = collect(a);
            assertEquals(Ipv4Layer.OK, a.pinger().send(B, 1, size, sim.nowNs()));
            assertTrue(sim.runUntil(() -> !replies.isEmpty(), 5 * SECOND), "no reply");
            assertEquals(List.of(new Reply(1, size, true)), replies);
            assertEquals(b.macAddress(), a.neighbours().peek(B));
            assertEquals("reachable", a.neighbours().stateOf(B));
            assertEquals("delay", b.neighbours().stateOf(Ipv4Address.parse("198.18.0.1")),
                "learned STALE from the request, then used for the reply");
        }
    }

    /** Any payload size under reordering and duplication (no loss) comes back intact, exactly once per request. */
    @Test
    void anySizeSurvivesReorderingAndDuplication() {
        qt().withExamples(60).forAll(integers().between(0, 65507), longs().all()).checkAssert((size, seed) -> {
            try (Simulation sim = new Simulation(MemoryWire.builder().seed(seed).reordering(0.3, 200_000)
                .duplication(0.1).delay(20_000, 10_000))) {
                final NetStack a = sim.addStack("a", "198.18.0.1/24");
                sim.addStack("b", "198.18.0.2/24");
                final List<Reply> replies = collect(a);
                a.pinger().send(B, 7, size, sim.nowNs());
                sim.runFor(3 * SECOND);
                assertTrue(!replies.isEmpty(), "seed " + seed + ": no reply for " + size + " bytes");
                for (Reply reply : replies) {
                    assertEquals(new Reply(7, size, true), reply, "seed " + seed);
                }
            }
        });
    }

    /** Under loss some pings go unanswered, but every reply that arrives is intact. */
    @Test
    void lossNeverCorruptsWhatArrives() {
        qt().withExamples(30).forAll(integers().between(0, 20000), longs().all()).checkAssert((size, seed) -> {
            try (Simulation sim = new Simulation(MemoryWire.builder().seed(seed).loss(0.05).reordering(0.1, 100_000))) {
                final NetStack a = sim.addStack("a", "198.18.0.1/24");
                sim.addStack("b", "198.18.0.2/24");
                final List<Reply> replies = collect(a);
                for (int seq = 0; seq < 10; seq++) {
                    a.pinger().send(B, seq, size, sim.nowNs());
                    sim.runFor(SECOND);
                }
                for (Reply reply : replies) {
                    assertTrue(reply.intact() && reply.length() == size, "seed " + seed + ": " + reply);
                }
            }
        });
    }
}
