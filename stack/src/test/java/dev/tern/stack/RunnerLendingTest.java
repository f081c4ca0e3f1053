package dev.tern.stack;

import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryPipe;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@link StackRunner} lends its stack to an application thread that waits on a socket: that thread polls the stack
 * itself between the runner's turns (see {@link NetStack}), and never while the runner polls or after it closed.
 */
class RunnerLendingTest {
    private static final long SECOND = 1_000_000_000L;
    private static final int B = 0xC612_0002; // 198.18.0.2

    /**
     * Records which threads poll the link and fails on two at once, or on any use after close: the stack must
     * never be polled by two threads, nor by a borrower after the runner closed it.
     */
    static final class WatchedLink extends ForwardingLink {
        final Set<Thread> pollers = ConcurrentHashMap.newKeySet();
        final AtomicReference<Thread> inside = new AtomicReference<>();
        final AtomicReference<String> violation = new AtomicReference<>();
        volatile boolean closed;

        WatchedLink(Link link) {
            super(link);
        }

        private void enter(String what) {
            if (closed) {
                violation.compareAndSet(null, what + " after close on " + Thread.currentThread().getName());
            }
            final Thread self = Thread.currentThread();
            final Thread other = inside.getAndSet(self);
            if (other != null && other != self) {
                violation.compareAndSet(null, what + " on " + self.getName() + " while " + other.getName() + " polled");
            }
        }

        private void leave() {
            inside.set(null);
        }

        @Override
        public int receive(FrameHandler handler, int maxFrames) {
            enter("receive");
            pollers.add(Thread.currentThread());
            try {
                return super.receive(handler, maxFrames);
            } finally {
                leave();
            }
        }

        @Override
        public boolean claim(TxFrame frame) {
            enter("claim");
            try {
                return super.claim(frame);
            } finally {
                leave();
            }
        }

        @Override
        public int flush() {
            enter("flush");
            try {
                return super.flush();
            } finally {
                leave();
            }
        }

        @Override
        public void close() {
            closed = true;
            super.close();
        }
    }

    /**
     * The runner sleeps a whole second between idle turns: a blocked receive still gets its echo at once, because
     * the waiting thread polls the stack itself, and the link saw that thread poll.
     */
    @Test
    void aThreadWaitingOnASocketPollsTheStackWhileTheRunnerSleeps() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, false)) {
            final WatchedLink clientLink = new WatchedLink(pipe.first());
            final NetStack client = NetStack.builder().name("client").link(clientLink).address("198.18.0.1/24")
                .countersInMemory().build();
            final NetStack server = NetStack.builder().name("server").link(pipe.second()).address("198.18.0.2/24")
                .countersInMemory().build();
            try (StackRunner clientRunner = StackRunner.start(client, new SleepingMillisIdleStrategy(1000));
                 StackRunner serverRunner = StackRunner.start(server, new BusySpinIdleStrategy())) {
                final UdpSocket echo = server.openUdp();
                echo.bind(7);
                final CompletableFuture<Integer> echoed = SelectorAndRunnerTest.echoUntilQuiet(echo);
                final UdpSocket socket = client.openUdp();
                socket.connect(B, 7);
                assertFalse(client.isOwnerThread(), "between turns the application thread does not own the stack");
                final MemorySegment message = Arena.ofAuto().allocate(100);
                final MemorySegment reply = Arena.ofAuto().allocate(100);
                final long start = System.nanoTime();
                for (int i = 0; i < 50; i++) {
                    message.set(ValueLayout.JAVA_INT, 0, i);
                    assertTrue(socket.sendTo(0, 0, message, 0, 100, SECOND));
                    assertEquals(100, socket.receive(reply, 0, 100, 10 * SECOND), "round trip " + i);
                    assertEquals(i, reply.get(ValueLayout.JAVA_INT, 0));
                }
                final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
                assertEquals(50, echoed.get(10, TimeUnit.SECONDS));
                assertTrue(clientLink.pollers.contains(Thread.currentThread()), "the waiting thread polled: " + clientLink.pollers);
                // Left to the sleeping runner alone, 50 round trips would take about 50 s.
                assertTrue(elapsedMs < 25_000, "50 round trips took " + elapsedMs + " ms");
                assertNull(clientLink.violation.get());
            }
        }
    }

    /**
     * Threads blocked on sockets borrow the stack while the runner polls it and while it closes: the link is never
     * polled by two threads at once, and never after the runner closed it; the blocked calls end by their timeout.
     */
    @Test
    void closingTheRunnerWaitsForABorrowerAndLendsNothingAfter() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, false)) {
            final WatchedLink link = new WatchedLink(pipe.first());
            final NetStack stack = NetStack.builder().name("closing").link(link).address("198.18.0.1/24")
                .countersInMemory().build();
            final StackRunner runner = StackRunner.start(stack, new BusySpinIdleStrategy());
            final UdpSocket first = stack.openUdp();
            first.bind(9);
            final UdpSocket second = stack.openUdp();
            second.bind(10);
            final CompletableFuture<Integer> one = waitOn(first);
            final CompletableFuture<Integer> two = waitOn(second);
            Thread.sleep(300); // both threads borrow and give back, the runner polls in between
            runner.close();
            assertTrue(link.closed);
            assertTrue(one.get(10, TimeUnit.SECONDS) <= 0);
            assertTrue(two.get(10, TimeUnit.SECONDS) <= 0);
            assertNull(link.violation.get());
            assertTrue(link.pollers.size() >= 2, "the waiting threads polled as well as the runner: " + link.pollers);
        }
    }

    private static CompletableFuture<Integer> waitOn(UdpSocket socket) {
        final CompletableFuture<Integer> result = new CompletableFuture<>();
        final Thread thread = new Thread(() -> {
            final MemorySegment buffer = Arena.ofAuto().allocate(100);
            try {
                result.complete(socket.receive(buffer, 0, 100, 1_500_000_000L));
            } catch (TernSocketException | RuntimeException e) {
                result.complete(-2);
            }
        }, "waiter-" + socket.localPort());
        thread.start();
        return result;
    }

    /**
     * A connection closed after its runner closed the stack (a channel the cleaner gets to late) returns at once: a
     * control call to a stack that is gone would otherwise wait for ever, holding the cleaner's one thread.
     */
    @Test
    void closingAConnectionOfAClosedStackReturnsAtOnceAndAControlCallSaysTheStackIsClosed() throws Exception {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, false)) {
            final NetStack client = NetStack.builder().name("client").link(pipe.first()).address("198.18.0.1/24")
                .countersInMemory().build();
            final NetStack server = NetStack.builder().name("server").link(pipe.second()).address("198.18.0.2/24")
                .countersInMemory().build();
            final TcpConnection connection;
            try (StackRunner serverRunner = StackRunner.start(server, new BusySpinIdleStrategy())) {
                final StackRunner clientRunner = StackRunner.start(client, new BusySpinIdleStrategy());
                server.listen(80, 4);
                connection = client.connect(B, 80);
                connection.awaitConnected(5 * SECOND);
                clientRunner.close();
                assertTrue(client.isClosed());
                final CompletableFuture<Void> closing = CompletableFuture.runAsync(connection::close);
                closing.get(2, TimeUnit.SECONDS);
                final IllegalStateException refused = org.junit.jupiter.api.Assertions.assertThrows(
                    IllegalStateException.class, () -> client.call(() -> 0));
                assertEquals("the stack client is closed", refused.getMessage());
            }
        }
    }
}
