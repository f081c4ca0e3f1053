package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.stack.sim.Simulation;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SelectorAndRunnerTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int B = Ipv4Address.parse("198.18.0.2");

    @Test
    void aSelectorHandsOutReadySocketsLevelTriggered() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final Selector selector = new Selector(b);
            final UdpSocket first = b.openUdp();
            first.bind(1000);
            final UdpSocket second = b.openUdp();
            second.bind(2000);
            selector.register(first, SelectableSocket.READ, "first");
            selector.register(second, SelectableSocket.READ, "second");
            final List<String> ready = new ArrayList<>();
            final Selector.Handler collect = (socket, ops, attachment) -> ready.add(attachment + ":" + ops);
            assertEquals(0, selector.selectNow(collect), "nothing received yet");
            final UdpSocket sender = a.openUdp();
            final MemorySegment data = MemorySegment.ofArray(new byte[] {1, 2, 3});
            sender.sendTo(B, 2000, data, 0, 3);
            sender.sendTo(B, 2000, data, 0, 3);
            sim.runFor(SECOND / 10);
            assertEquals(1, selector.selectNow(collect));
            assertEquals(List.of("second:1"), ready);
            ready.clear();
            assertEquals(1, selector.selectNow(collect), "still readable: level-triggered");
            final MemorySegment buffer = Arena.ofAuto().allocate(100);
            second.receive(buffer, 0, 100);
            second.receive(buffer, 0, 100);
            ready.clear();
            assertEquals(0, selector.selectNow(collect), "drained: no longer ready");
            sender.sendTo(B, 1000, data, 0, 3);
            sim.runFor(SECOND / 10);
            assertEquals(1, selector.selectNow(collect));
            assertEquals(List.of("first:1"), ready);
        }
    }

    /** More ready sockets than the ready queue's array holds: every one is handed out, select after select. */
    @Test
    void moreReadySocketsThanTheQueueHoldsAreAllHandedOut() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final NetStack b = sim.addStack("b", "198.18.0.2/24");
            final Selector selector = new Selector(b, 4);
            final List<UdpSocket> sockets = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                final UdpSocket socket = b.openUdp();
                socket.bind(1000 + i);
                selector.register(socket, SelectableSocket.READ, i);
                sockets.add(socket);
            }
            final UdpSocket sender = a.openUdp();
            final MemorySegment data = MemorySegment.ofArray(new byte[] {1, 2, 3});
            for (int i = 0; i < 40; i++) {
                sender.sendTo(B, 1000 + i, data, 0, 3);
            }
            sim.runFor(SECOND / 10);
            final List<Integer> ready = new ArrayList<>();
            final Selector.Handler collect = (socket, ops, attachment) -> ready.add((Integer) attachment);
            assertEquals(40, selector.selectNow(collect), "all forty, ten times the array");
            assertEquals(40, ready.stream().distinct().count());
            ready.clear();
            assertEquals(40, selector.selectNow(collect), "still readable: level-triggered, past the array too");
            final MemorySegment buffer = Arena.ofAuto().allocate(100);
            for (int i = 0; i < 40; i += 2) {
                sockets.get(i).receive(buffer, 0, 100);
            }
            ready.clear();
            assertEquals(20, selector.selectNow(collect), "the twenty not drained");
            assertTrue(ready.stream().allMatch(i -> i % 2 == 1));
            for (int i = 1; i < 40; i += 2) {
                sockets.get(i).receive(buffer, 0, 100);
            }
            assertEquals(0, selector.selectNow(collect));
            sender.sendTo(B, 1007, data, 0, 3);
            sim.runFor(SECOND / 10);
            ready.clear();
            assertEquals(1, selector.selectNow(collect));
            assertEquals(List.of(7), ready);
        }
    }

    @Test
    void writeInterestReportsRoomInTheSendRing() throws Exception {
        try (Simulation sim = new Simulation()) {
            final NetStack a = sim.addStack("a", "198.18.0.1/24");
            final Selector selector = new Selector(a);
            final UdpSocket socket = a.openUdp();
            selector.register(socket, SelectableSocket.WRITE, null);
            assertEquals(1, selector.selectNow((s, ops, att) -> assertEquals(SelectableSocket.WRITE, ops)));
        }
    }

    /** Two stacks, each driven by its own StackRunner thread; application threads block on them. */
    @Test
    void applicationThreadsBlockOnSocketsOfStacksDrivenByRunners() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, false)) {
            final NetStack client = NetStack.builder().name("client").link(pipe.first()).address("198.18.0.1/24")
                .countersInMemory().build();
            final NetStack server = NetStack.builder().name("server").link(pipe.second()).address("198.18.0.2/24")
                .countersInMemory().build();
            try (StackRunner clientRunner = StackRunner.start(client, new BusySpinIdleStrategy());
                 StackRunner serverRunner = StackRunner.start(server, new BusySpinIdleStrategy())) {
                assertTrue(!client.isOwnerThread(), "the runner's thread owns the stack now");
                final UdpSocket echo = server.openUdp(); // control calls are handed to the runner's thread
                echo.bind(7);
                final CompletableFuture<Integer> echoed = echoUntilQuiet(echo);
                final UdpSocket socket = client.openUdp();
                socket.connect(B, 7);
                final MemorySegment message = Arena.ofAuto().allocate(100);
                final MemorySegment reply = Arena.ofAuto().allocate(100);
                for (int i = 0; i < 1000; i++) {
                    message.set(ValueLayout.JAVA_INT, 0, i);
                    assertTrue(socket.sendTo(0, 0, message, 0, 100, SECOND));
                    assertEquals(100, socket.receive(reply, 0, 100, 5 * SECOND), "round trip " + i);
                    assertEquals(i, reply.get(ValueLayout.JAVA_INT, 0));
                }
                assertEquals(1000, echoed.get(10, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aRunnersLivenessIsACounter() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, false)) {
            final NetStack stack = NetStack.builder().name("s").link(pipe.first()).address("198.18.0.1/24")
                .countersInMemory().build();
            final StackRunner runner = StackRunner.start(stack, new BusySpinIdleStrategy());
            final long deadline = System.nanoTime() + 5 * SECOND;
            while (stack.counters().value("stack.running") != 1 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(1, stack.counters().value("stack.running"), "1 while the runner's loop runs");
            runner.close();
            assertEquals(0, stack.counters().value("stack.running"), "0 once it ended");
        }
    }

    @Test
    void aBlockedSelectWakesUpWhenAskedFromAnotherThread() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, false)) {
            final NetStack stack = NetStack.builder().name("s").link(pipe.first()).address("198.18.0.1/24")
                .countersInMemory().build();
            try (StackRunner runner = StackRunner.start(stack, new BusySpinIdleStrategy())) {
                final Selector selector = new Selector(stack);
                final UdpSocket socket = stack.openUdp();
                socket.bind(9);
                selector.register(socket, SelectableSocket.READ, null);
                final long start = System.nanoTime();
                final Thread waker = new Thread(() -> {
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException ignored) {
                        Thread.currentThread().interrupt();
                    }
                    selector.wakeup();
                });
                waker.start();
                assertEquals(0, selector.select(10 * SECOND, (s, ops, att) -> { }));
                final long waitedMs = (System.nanoTime() - start) / 1_000_000;
                assertTrue(waitedMs >= 150 && waitedMs < 5_000, "woke after " + waitedMs + " ms");
                waker.join();
            }
        }
    }

    /** A link whose receive throws {@code failures} times: a stand-in for a bug below the per-frame guard. */
    private static final class FailingLink extends ForwardingLink {
        private volatile int failures;

        FailingLink(Link link, int failures) {
            super(link);
            this.failures = failures;
        }

        @Override
        public int receive(FrameHandler handler, int maxFrames) {
            if (failures > 0) {
                failures--;
                throw new IllegalStateException("link bug " + failures);
            }
            return link.receive(handler, maxFrames);
        }
    }

    @Test
    void anExceptionEscapingARunnersLoopReachesItsHandlerIsCountedAndTheLoopGoesOn() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, false)) {
            final NetStack client = NetStack.builder().name("client").link(pipe.first()).address("198.18.0.1/24")
                .countersInMemory().build();
            final NetStack server = NetStack.builder().name("server").link(new FailingLink(pipe.second(), 3))
                .address("198.18.0.2/24").countersInMemory().build();
            final List<Throwable> heard = new CopyOnWriteArrayList<>();
            try (StackRunner clientRunner = StackRunner.start(client, new BusySpinIdleStrategy());
                 StackRunner serverRunner = StackRunner.start(server, new BusySpinIdleStrategy(), heard::add)) {
                final UdpSocket echo = server.openUdp();
                echo.bind(7);
                final UdpSocket socket = client.openUdp();
                socket.connect(B, 7);
                final MemorySegment message = Arena.ofAuto().allocate(10);
                assertTrue(socket.sendTo(0, 0, message, 0, 10, SECOND));
                assertEquals(10, echo.receive(message, 0, 10, 5 * SECOND), "the loop went on after the failures");
                // The runner hands its turn's exception to the handler after giving the stack back, so the receive
                // above (the test's thread polls while it waits) can finish first: wait for the handler, bounded.
                final long deadline = System.nanoTime() + 5 * SECOND;
                while (heard.size() < 3 && System.nanoTime() - deadline < 0) {
                    Thread.onSpinWait();
                }
                assertEquals(List.of("link bug 2", "link bug 1", "link bug 0"),
                    heard.stream().map(Throwable::getMessage).toList());
                assertEquals(3, server.counters().value("stack.poll_errors"));
                assertEquals(0, client.counters().value("stack.poll_errors"));
            }
        }
    }

    /** Echoes every datagram {@code echo} receives on another thread until 2 s pass without one; how many. */
    static CompletableFuture<Integer> echoUntilQuiet(UdpSocket echo) {
        return CompletableFuture.supplyAsync(() -> {
            final MemorySegment buffer = Arena.ofAuto().allocate(2000);
            int count = 0;
            try {
                int length;
                while ((length = echo.receive(buffer, 0, 2000, 2 * SECOND)) >= 0) {
                    echo.sendTo(echo.lastSourceAddress(), echo.lastSourcePort(), buffer, 0, length, SECOND);
                    count++;
                }
            } catch (TernSocketException e) {
                throw new IllegalStateException(e);
            }
            return count;
        });
    }
}
