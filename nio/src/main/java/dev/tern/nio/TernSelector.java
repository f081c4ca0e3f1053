package dev.tern.nio;

import dev.tern.stack.NetStack;
import dev.tern.stack.SelectableSocket;
import dev.tern.stack.TcpConnection;

import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.IllegalSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectableChannel;
import java.nio.channels.spi.AbstractSelector;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A {@link Selector} over Tern's channels, with the JDK's semantics: keys with interest and ready sets, a
 * selected-key set that {@code select} adds to (or an action called per ready key), {@code wakeup} from any thread,
 * cancelled keys flushed at the next selection, {@code close} while another thread selects.
 *
 * <p>A channel is served by Tern or by the kernel ({@link Rules}), and one selector watches both kinds:
 * <ul>
 *   <li>Tern channels through the stack's {@link dev.tern.stack.Selector}: the stack queues a socket when its
 *       readiness changes, so a selection costs the ready channels, not the registered ones; a selecting thread that
 *       waits polls the stack itself between the runner's turns, as a blocked read does.
 *   <li>Kernel channels through an inner selector of the JDK's own provider (epoll), whose keys stand for ours.
 *   <li>Both at once: the thread blocks in the kernel's epoll, and the stack wakes it when a Tern socket is queued
 *       ({@link dev.tern.stack.Selector#onQueued}); the flag that says "blocked in the kernel" is raised before the
 *       Tern queue is checked a last time, so a socket queued in between is never missed.
 * </ul>
 *
 * <p>A sharded stack's channels live on several stacks (a server channel on all of them): the selector keeps one
 * stack selector per stack, polls each, and parks until any of them queues a socket.
 *
 * <p>Selections are serialised on the selector (as the JDK's are); the selected-key set belongs to the selecting
 * thread. A selection allocates nothing: keys are found through their attachments and the selected-key set is an
 * indexed array ({@link SelectedKeySet}); the idle sweep, once a period, is the exception ({@link #sweepIfDue}).
 *
 * <p>Deviation: a Tern channel can be registered with one selector at a time (the stack's sockets have one
 * readiness queue each); registering it with a second throws {@link IllegalStateException}. The JDK allows several.
 */
final class TernSelector extends AbstractSelector {
    private final Set<SelectionKey> keys = ConcurrentHashMap.newKeySet();
    private final Set<SelectionKey> publicKeys = Collections.unmodifiableSet(keys);
    private final SelectedKeySet selected = new SelectedKeySet();
    private final dev.tern.stack.Selector.Handler ternHandler = this::onTernReady;
    private final Consumer<SelectionKey> kernelAction = this::onKernelReady;
    private final Runnable queuedHook = this::onTernQueued;
    private final Object attachLock = new Object();

    /**
     * The stacks' selectors for Tern sockets, one per stack (shard) whose sockets attached, made when the first of
     * each attaches; replaced, never changed in place. Written under attachLock.
     */
    private volatile dev.tern.stack.Selector[] ternSelectors = new dev.tern.stack.Selector[0];
    /** The kernel's selector for kernel channels; made when the first one attaches. Guarded by attachLock. */
    private volatile Selector kernelSelector;
    private volatile int ternAttached;
    private volatile int kernelAttached;
    private volatile boolean wakeupRequested;
    private volatile boolean blockedInKernel;
    /** The selecting thread is parked waiting on the selectors of several stacks (see waitOnStacks). */
    private volatile boolean parkedOnStacks;
    private volatile Thread selectingThread;

    // Selecting thread only:
    private Consumer<SelectionKey> action;
    private int updated;
    /** When the next idle sweep is due (see {@link #sweepIfDue}); 0 before the first selection. */
    private long nextSweepNs;
    /**
     * The idle sweep's list: Tern socket channels that may hold rings (registered since, ready since, or found by the
     * full look every {@link #FULL_SWEEP_EVERY}th sweep); a channel without rings leaves it at the next sweep. The
     * selecting thread's alone; {@link #registered} brings it channels registered on other threads.
     */
    private final ArrayList<TernSocketChannel> sweepList = new ArrayList<>();
    private final Queue<TernSocketChannel> registered = new ConcurrentLinkedQueue<>();
    private int sweepCount;
    /**
     * Every this many sweeps one looks at every registered key, for a channel that took its rings back without the
     * selector seeing it ready (a program writing to an idle connection that never answers).
     */
    static final int FULL_SWEEP_EVERY = 16;

    TernSelector(TernSelectorProvider provider) {
        super(provider);
    }

    // ------------------------------------------------------------------------------------------ registration

    @Override
    protected SelectionKey register(AbstractSelectableChannel channel, int ops, Object attachment) {
        if (!(channel instanceof TernChannel ternChannel)) {
            throw new IllegalSelectorException();
        }
        if (!isOpen()) {
            throw new ClosedSelectorException();
        }
        final TernSelectionKey key = new TernSelectionKey(ternChannel, this, ops);
        key.attach(attachment);
        keys.add(key);
        ternChannel.keys().add(key);
        try {
            attach(key);
        } catch (RuntimeException e) {
            // A Tern socket already watched by another selector (see the class comment): no key, as if never made.
            keys.remove(key);
            ternChannel.keys().remove(key);
            throw e;
        }
        if (channel instanceof TernSocketChannel socketChannel && idleReleaseNs() > 0) {
            registered.add(socketChannel); // for the idle sweep, which runs on the selecting thread
        }
        return key;
    }

    /** Watches the side serving {@code key}'s channel, if it has one yet; any thread. */
    void attach(TernSelectionKey key) {
        boolean attached = false;
        synchronized (key) {
            if (!key.isValid() || !isOpen()) {
                return;
            }
            final TernChannel channel = key.ternChannel();
            final SelectableSocket[] sockets = channel.ternSockets();
            final SelectableChannel kernel = channel.kernelChannel();
            if (sockets != null && key.sockets == null) {
                for (SelectableSocket socket : sockets) {
                    ternSelectorFor(socket.stack()).register(socket, channel.ternInterest(key.interest()), key);
                }
                key.sockets = sockets;
                synchronized (attachLock) {
                    ternAttached++;
                }
                attached = true;
            } else if (kernel != null && key.kernelKey == null) {
                try {
                    key.kernelKey = kernel.register(kernelSelector(), key.interest(), key);
                    synchronized (attachLock) {
                        kernelAttached++;
                    }
                    attached = true;
                } catch (ClosedChannelException e) {
                    return; // closed meanwhile: its key is cancelled and flushed at the next selection
                } catch (IOException e) {
                    throw new IllegalStateException("cannot open the kernel's selector: " + e.getMessage(), e);
                }
            }
        }
        if (attached) {
            wakeSelectingThread(); // so that a selection in progress watches it from now on
        }
    }

    private dev.tern.stack.Selector ternSelectorFor(NetStack stack) {
        for (dev.tern.stack.Selector selector : ternSelectors) {
            if (selector.stack() == stack) {
                return selector;
            }
        }
        synchronized (attachLock) {
            final dev.tern.stack.Selector[] current = ternSelectors;
            for (dev.tern.stack.Selector selector : current) {
                if (selector.stack() == stack) {
                    return selector;
                }
            }
            final dev.tern.stack.Selector made = new dev.tern.stack.Selector(stack);
            made.onQueued(queuedHook);
            final dev.tern.stack.Selector[] grown = java.util.Arrays.copyOf(current, current.length + 1);
            grown[current.length] = made;
            ternSelectors = grown;
            return made;
        }
    }

    private Selector kernelSelector() throws IOException {
        synchronized (attachLock) {
            if (kernelSelector == null) {
                kernelSelector = KernelProvider.get().openSelector();
            }
            return kernelSelector;
        }
    }

    /** {@code key}'s interest changed: the side behind it watches the new set; any thread. */
    void interestChanged(TernSelectionKey key) {
        synchronized (key) {
            final SelectableSocket[] sockets = key.sockets;
            final SelectionKey kernelKey = key.kernelKey;
            if (sockets != null) {
                for (SelectableSocket socket : sockets) {
                    ternSelectorFor(socket.stack()).register(socket, key.ternChannel().ternInterest(key.interest()), key);
                }
            } else if (kernelKey != null) {
                try {
                    kernelKey.interestOps(key.interest());
                } catch (CancelledKeyException e) {
                    // the kernel channel was closed: its key is cancelled, ours follows
                }
            }
        }
    }

    private void detach(TernSelectionKey key) {
        synchronized (key) {
            final SelectableSocket[] sockets = key.sockets;
            if (sockets != null) {
                for (SelectableSocket socket : sockets) {
                    ternSelectorFor(socket.stack()).deregister(socket);
                }
                key.sockets = null;
                synchronized (attachLock) {
                    ternAttached--;
                }
            }
            final SelectionKey kernelKey = key.kernelKey;
            if (kernelKey != null) {
                kernelKey.cancel();
                key.kernelKey = null;
                synchronized (attachLock) {
                    kernelAttached--;
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------ selection

    @Override
    public Set<SelectionKey> keys() {
        ensureOpen();
        return publicKeys;
    }

    @Override
    public Set<SelectionKey> selectedKeys() {
        ensureOpen();
        return selected;
    }

    private void ensureOpen() {
        if (!isOpen()) {
            throw new ClosedSelectorException();
        }
    }

    @Override
    public int selectNow() throws IOException {
        return doSelect(null, 0);
    }

    @Override
    public int select(long timeout) throws IOException {
        if (timeout < 0) {
            throw new IllegalArgumentException("Negative timeout");
        }
        return doSelect(null, timeout == 0 ? -1 : millisToNanos(timeout));
    }

    @Override
    public int select() throws IOException {
        return doSelect(null, -1);
    }

    @Override
    public int select(Consumer<SelectionKey> action, long timeout) throws IOException {
        if (timeout < 0) {
            throw new IllegalArgumentException("Negative timeout");
        }
        return doSelect(Objects.requireNonNull(action), timeout == 0 ? -1 : millisToNanos(timeout));
    }

    @Override
    public int select(Consumer<SelectionKey> action) throws IOException {
        return doSelect(Objects.requireNonNull(action), -1);
    }

    @Override
    public int selectNow(Consumer<SelectionKey> action) throws IOException {
        return doSelect(Objects.requireNonNull(action), 0);
    }

    private static long millisToNanos(long millis) {
        return millis >= Long.MAX_VALUE / 2_000_000L ? -1 : millis * 1_000_000L;
    }

    /** One selection: waits up to {@code timeoutNs} (0: not at all; negative: without limit). */
    private int doSelect(Consumer<SelectionKey> handler, long timeoutNs) throws IOException {
        synchronized (this) {
            ensureOpen();
            action = handler;
            updated = 0;
            try {
                processCancelledKeys();
                pollAll();
                sweepIfDue(System.nanoTime());
                if (updated == 0 && timeoutNs != 0 && !wakeupRequested) {
                    waitForReadiness(timeoutNs);
                }
                processCancelledKeys();
                return updated;
            } finally {
                action = null;
                wakeupRequested = false; // consumed by this selection, as the JDK drains its wakeup pipe
            }
        }
    }

    private void pollAll() throws IOException {
        selectNowOnStacks();
        final Selector kernel = kernelSelector;
        if (kernel != null && kernelAttached > 0) {
            kernel.selectNow(kernelAction);
        }
    }

    private void waitForReadiness(long timeoutNs) throws IOException {
        final long deadline = timeoutNs < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutNs;
        selectingThread = Thread.currentThread();
        begin(); // an interrupt wakes the selection up (and leaves the thread's interrupt status set)
        try {
            while (updated == 0 && !wakeupRequested && isOpen()) {
                final long now = System.nanoTime();
                final long remaining = deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - now;
                if (remaining <= 0) {
                    return;
                }
                // A selection that waits long still sweeps on time: it wakes for the sweep and goes on waiting.
                final long untilSweep = nextSweepNs - now;
                final boolean sweeps = ternAttached > 0 && idleReleaseNs() > 0 && untilSweep < remaining;
                if (waitOnce(sweeps ? Math.max(untilSweep, 1) : remaining) > 0) {
                    return; // ready sockets were seen, even if none matched a key's state: return 0, as the JDK does
                }
                sweepIfDue(System.nanoTime());
            }
        } finally {
            end();
            selectingThread = null;
        }
    }

    /**
     * Waits once on whatever the registered channels need; returns early on readiness or any wake-up, with how many
     * ready sockets or kernel keys it saw.
     */
    private int waitOnce(long remainingNs) throws IOException {
        final dev.tern.stack.Selector[] stacks = ternSelectors;
        final Selector kernel = kernelSelector;
        final boolean haveTern = stacks.length > 0 && ternAttached > 0;
        final boolean haveKernel = kernel != null && kernelAttached > 0;
        if (haveTern && !haveKernel) {
            return stacks.length == 1 ? stacks[0].select(Math.min(remainingNs, Long.MAX_VALUE / 4), ternHandler)
                : waitOnStacks(remainingNs);
        }
        if (haveKernel && !haveTern) {
            return kernel.select(kernelAction, toMillis(remainingNs));
        }
        if (haveKernel) {
            int seen;
            blockedInKernel = true;
            try {
                seen = selectNowOnStacks(); // after raising the flag: a socket queued from now on wakes the kernel
                if (seen == 0 && !wakeupRequested) {
                    seen += kernel.select(kernelAction, toMillis(remainingNs));
                }
            } finally {
                blockedInKernel = false;
            }
            return seen + selectNowOnStacks();
        }
        LockSupport.parkNanos(this, Math.min(remainingNs, Long.MAX_VALUE / 4));
        return 0;
    }

    /** Every stack selector's ready sockets, without waiting; returns how many. */
    private int selectNowOnStacks() {
        int seen = 0;
        for (dev.tern.stack.Selector stack : ternSelectors) {
            seen += stack.selectNow(ternHandler);
        }
        return seen;
    }

    /**
     * Waits on the selectors of several stacks (a sharded stack's): parks until one of them queues a socket (its hook
     * unparks this thread), a wakeup, or the time is up. The flag goes up before the last look, so a socket queued in
     * between leaves the thread a permit and the park returns at once.
     */
    private int waitOnStacks(long remainingNs) {
        parkedOnStacks = true;
        try {
            int seen = selectNowOnStacks();
            if (seen == 0 && !wakeupRequested) {
                LockSupport.parkNanos(this, Math.min(remainingNs, Long.MAX_VALUE / 4));
                seen = selectNowOnStacks();
            }
            return seen;
        } finally {
            parkedOnStacks = false;
        }
    }

    private long idleReleaseNs() {
        return ((TernSelectorProvider) provider()).idleReleaseNs();
    }

    /**
     * The idle sweep ({@link TernSelectorProvider#releaseIdleBuffersAfter}): once per period, every registered Tern
     * connection that was neither read nor written during the last whole period gives its rings back, so that a
     * server holding many idle connections (an event loop's, as Netty's) keeps their control blocks only, as a kernel
     * socket holds no buffer memory while idle. Each idle channel lets go of its rings under its own I/O locks, and
     * the rings of all of them go back to their stack in one round trip to its thread, which hands their pages back to
     * the system together (a round trip per channel, each waiting for its own page discard, held an event loop 0.4-0.6 s
     * a sweep while 5,000 new connections went idle each second). The sweep looks only at the channels on its list,
     * those that may hold rings, not at every key: a look at every key cost about 0.4 µs a channel, 40 ms a second
     * for 100,000 idle ones; it is made once every {@link #FULL_SWEEP_EVERY} sweeps. {@code nio.idle.sweeps},
     * {@code sweep_ns} and {@code sweep_max_ns} show what sweeps cost. Cold path: the list of idle channels (and the
     * key set's iterator, in a full look) are its allocations.
     */
    private void sweepIfDue(long nowNs) {
        final long period = idleReleaseNs();
        if (period <= 0 || ternAttached == 0) {
            nextSweepNs = 0; // armed again when there is something to sweep
            if (!sweepList.isEmpty() || !registered.isEmpty()) {
                forgetSweepList(); // hold no channel while there is no sweep (a closed one stays collectable)
            }
            return;
        }
        if (nextSweepNs == 0) {
            nextSweepNs = nowNs + period;
            return;
        }
        if (nowNs - nextSweepNs < 0) {
            return;
        }
        nextSweepNs = nowNs + period;
        final long startNs = System.nanoTime();
        TernSocketChannel channel;
        while ((channel = registered.poll()) != null) {
            list(channel);
        }
        if (++sweepCount % FULL_SWEEP_EVERY == 0) {
            for (SelectionKey key : keys) {
                if (key.isValid() && key.channel() instanceof TernSocketChannel c && c.holdsRings()) {
                    list(c);
                }
            }
        }
        final List<TcpConnection> idle = new ArrayList<>();
        for (int i = sweepList.size() - 1; i >= 0; i--) {
            final TernSocketChannel c = sweepList.get(i);
            if (!c.holdsRings()) {
                // Released by the last sweep, closed, or never served by Tern: off the list, swapped with the last.
                c.sweepListed = false;
                final TernSocketChannel last = sweepList.removeLast();
                if (i < sweepList.size()) {
                    sweepList.set(i, last);
                }
                continue;
            }
            final TcpConnection letGo = c.letGoIfIdle();
            if (letGo != null) {
                idle.add(letGo);
            }
        }
        if (!idle.isEmpty()) {
            TcpConnection.releaseLetGo(idle);
        }
        final NioCounters counters = ((TernSelectorProvider) provider()).counters();
        if (counters != null) {
            final long tookNs = System.nanoTime() - startNs;
            counters.add(counters.idleSweeps, 1);
            counters.add(counters.idleSweepNs, tookNs);
            counters.proposeMax(counters.idleSweepMaxNs, tookNs);
        }
    }

    /** Channels the idle sweep holds now (on its list, or registered and not yet listed); for tests. */
    int sweepHolds() {
        return sweepList.size() + registered.size();
    }

    /** Selecting thread: empties the idle sweep's list (the full look finds what holds rings when sweeps resume). */
    private void forgetSweepList() {
        registered.clear();
        for (TernSocketChannel c : sweepList) {
            c.sweepListed = false;
        }
        sweepList.clear();
    }

    /** Selecting thread: puts a channel on the idle sweep's list, once. */
    private void list(TernSocketChannel channel) {
        if (!channel.sweepListed) {
            channel.sweepListed = true;
            sweepList.add(channel);
        }
    }

    /** Milliseconds for the kernel's select, rounded up (its 0 means "no limit"). */
    private static long toMillis(long remainingNs) {
        return remainingNs == Long.MAX_VALUE ? 0 : Math.max(1, (remainingNs + 999_999) / 1_000_000);
    }

    /**
     * Stack thread: a Tern socket was queued as ready; wakes a selecting thread parked on several stacks, or blocked
     * in the kernel's epoll.
     */
    private void onTernQueued() {
        if (parkedOnStacks) {
            final Thread selecting = selectingThread;
            if (selecting != null) {
                LockSupport.unpark(selecting);
            }
        }
        if (blockedInKernel) {
            final Selector kernel = kernelSelector;
            if (kernel != null) {
                kernel.wakeup();
            }
        }
    }

    private void onTernReady(SelectableSocket socket, int ternReady, Object attachment) {
        final TernSelectionKey key = (TernSelectionKey) attachment;
        if (!key.isValid()) {
            return;
        }
        if (key.ternChannel() instanceof TernSocketChannel channel && !channel.sweepListed && idleReleaseNs() > 0) {
            list(channel); // ready, so likely holding rings again: the next sweep looks
        }
        final int ops = key.ternChannel().translateReadyOps(ternReady, key.interest());
        if (ops != 0) {
            updated += update(key, ops);
        }
    }

    private void onKernelReady(SelectionKey kernelKey) {
        final TernSelectionKey key = (TernSelectionKey) kernelKey.attachment();
        if (!key.isValid() || !kernelKey.isValid()) {
            return;
        }
        final int ops = kernelKey.readyOps() & key.interest();
        if (ops != 0) {
            updated += update(key, ops);
        }
    }

    /** As the JDK's selector: an action gets the key with these ops; else the key joins (or its ops join) the set. */
    private int update(TernSelectionKey key, int ops) {
        if (action != null) {
            key.ready(ops);
            action.accept(key);
            ensureOpen();
            return 1;
        }
        if (selected.contains(key)) {
            final int old = key.ready();
            if ((old | ops) != old) {
                key.ready(old | ops);
                return 1;
            }
            return 0;
        }
        key.ready(ops);
        selected.addKey(key);
        return 1;
    }

    private void processCancelledKeys() throws IOException {
        final Set<SelectionKey> cancelled = cancelledKeys();
        boolean kernelKeysCancelled = false;
        synchronized (cancelled) {
            if (cancelled.isEmpty()) {
                return;
            }
            for (SelectionKey k : cancelled) {
                final TernSelectionKey key = (TernSelectionKey) k;
                kernelKeysCancelled |= key.kernelKey != null;
                detach(key);
                keys.remove(key);
                selected.remove(key);
                key.ternChannel().keys().remove(key);
                deregister(key);
            }
            cancelled.clear();
        }
        final Selector kernel = kernelSelector;
        if (kernelKeysCancelled && kernel != null) {
            // Flush the kernel's own cancelled keys now: a closed kernel channel releases its file descriptor only
            // once no selector holds it.
            kernel.selectNow(kernelAction);
        }
    }

    // ------------------------------------------------------------------------------------------ wakeup, close

    @Override
    public Selector wakeup() {
        wakeupRequested = true;
        wakeSelectingThread();
        return this;
    }

    /** Makes a blocked selection look again (at a new channel, or for a wakeup), wherever it waits. */
    private void wakeSelectingThread() {
        final Thread selecting = selectingThread;
        if (selecting == null) {
            return;
        }
        for (dev.tern.stack.Selector tern : ternSelectors) {
            tern.wakeup();
        }
        final Selector kernel = kernelSelector;
        if (kernel != null) {
            kernel.wakeup();
        }
        LockSupport.unpark(selecting);
    }

    @Override
    protected void implCloseSelector() throws IOException {
        wakeup();
        synchronized (this) {
            for (SelectionKey k : keys) {
                final TernSelectionKey key = (TernSelectionKey) k;
                detach(key);
                key.ternChannel().keys().remove(key);
                deregister(key);
            }
            keys.clear();
            selected.clear();
            for (dev.tern.stack.Selector tern : ternSelectors) {
                tern.onQueued(null);
            }
            final Selector kernel = kernelSelector;
            if (kernel != null) {
                kernel.close();
            }
        }
    }
}
