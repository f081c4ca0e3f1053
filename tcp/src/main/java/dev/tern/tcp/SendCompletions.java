package dev.tern.tcp;

import static dev.tern.tcp.TcpControlBlocks.F_RINGS;

/**
 * Send completions, Linux's MSG_ZEROCOPY contract: once enabled on a connection (SO_ZEROCOPY), each send the owner
 * {@link #track tracks} gets the next 32-bit id, and when every byte of it is acknowledged the id joins the
 * connection's completion notice: a range of ids, first to last, that the owner reads with {@link #take} (Linux's
 * error queue, SO_EE_ORIGIN_ZEROCOPY). Acknowledgments are cumulative (RFC 9293 §3.4) and ids go in send order, so
 * the sends complete in order and the ids not yet read always form one range: a new completion extends it, as
 * Linux coalesces consecutive notices. Tern copies every send into its send ring, so each notice says "copied"
 * (Linux's SO_EE_CODE_ZEROCOPY_COPIED): the owner's buffer was free once the call returned; the notice tells it
 * the peer has the bytes.
 *
 * <p>When the connection ends with sends still unacknowledged (reset, timeout) they complete with it, as Linux
 * releases them with the write queue: every id gets exactly one notice, and the connection's error says the bytes
 * were not delivered. A send that fails (no connection, EPIPE) takes no id.
 *
 * <p>A send is tracked by the position of its last byte in the connection's byte stream (bytes acknowledged plus
 * bytes in the send ring), so SYN and FIN sequence numbers play no part. The positions wait in a fixed ring per
 * connection, allocated when the option is first enabled (a cold path); a send beyond it is refused with
 * {@code -NO_BUFFER}, as Linux refuses one beyond its option memory (ENOBUFS). Owned by the shard thread; nothing
 * here allocates on an ACK.
 */
public final class SendCompletions {
    /** Sends that may wait unacknowledged on one connection. */
    public static final int MAX_PENDING = 256;

    private final TcpControlBlocks tcb;
    private final ConnectionBuffers buffers;
    private final EventQueue events;
    private final TcpCounters counters;
    private final boolean[] enabled;
    /** The next id to give, per connection (Linux's sk_zckey). */
    private final int[] nextId;
    /** Each connection's pending sends' end positions, oldest at {@code head}; null until enabled once. */
    private final long[][] ends;
    private final int[] head;
    private final int[] pending;
    /** The notice not yet read: ids {@code first..last}, while {@code ready}. */
    private final boolean[] ready;
    private final int[] first;
    private final int[] last;

    SendCompletions(TcpControlBlocks tcb, ConnectionBuffers buffers, EventQueue events, TcpCounters counters) {
        this.tcb = tcb;
        this.buffers = buffers;
        this.events = events;
        this.counters = counters;
        final int capacity = tcb.capacity();
        this.enabled = new boolean[capacity];
        this.nextId = new int[capacity];
        this.ends = new long[capacity][];
        this.head = new int[capacity];
        this.pending = new int[capacity];
        this.ready = new boolean[capacity];
        this.first = new int[capacity];
        this.last = new int[capacity];
    }

    /** SO_ZEROCOPY: whether the owner's sends may be tracked. Returns 0 or {@code -INVALID} for a bad handle. */
    public int enable(int connection, boolean on) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0) {
            return -TcpError.INVALID;
        }
        if (on && ends[c] == null) {
            ends[c] = new long[MAX_PENDING];
        }
        enabled[c] = on;
        return 0;
    }

    /** Whether SO_ZEROCOPY is on; false for a bad handle. */
    public boolean enabled(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c >= 0 && enabled[c];
    }

    /**
     * The owner just wrote one send into the send ring (at least one byte, since the last call): it gets the next
     * id, returned as an unsigned 32-bit value, and completes when every byte written so far is acknowledged.
     * Returns {@code -INVALID} when the option is off or the handle bad, {@code -NO_BUFFER} when
     * {@link #MAX_PENDING} sends already wait (no id is taken then).
     */
    public long track(int connection) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || !enabled[c] || !tcb.hasFlag(c, F_RINGS)) {
            return -TcpError.INVALID;
        }
        if (pending[c] == MAX_PENDING) {
            counters.completionsRefused.incrementRelease();
            return -TcpError.NO_BUFFER;
        }
        final long[] ring = ends[c];
        ring[(head[c] + pending[c]) % MAX_PENDING] = tcb.bytesAcked(c) + buffers.sendRing(c).available();
        pending[c]++;
        counters.completionsTracked.incrementRelease();
        final int id = nextId[c];
        nextId[c] = id + 1;
        // A blocking send may finish after its bytes were all acknowledged: it completes at once.
        acknowledged(c);
        return Integer.toUnsignedLong(id);
    }

    /** How many tracked sends wait for their acknowledgment; 0 for a bad handle. */
    public int pending(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 ? 0 : pending[c];
    }

    /** Whether a notice waits to be read (Linux's POLLERR from a non-empty error queue). */
    public boolean ready(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c >= 0 && ready[c];
    }

    /** The first id of the waiting notice (Linux's ee_info), unsigned; -1 when none waits. */
    public long first(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 || !ready[c] ? -1 : Integer.toUnsignedLong(first[c]);
    }

    /** The last id of the waiting notice (Linux's ee_data), unsigned; -1 when none waits. */
    public long last(int connection) {
        final int c = tcb.ownedSlot(connection);
        return c < 0 || !ready[c] ? -1 : Integer.toUnsignedLong(last[c]);
    }

    /**
     * Reads the waiting notice away (recvmsg with MSG_ERRQUEUE): returns 0, or {@code -INVALID} when none waits
     * (Linux's EAGAIN) or the handle is bad. Read {@link #first} and {@link #last} before.
     */
    public int take(int connection) {
        final int c = tcb.ownedSlot(connection);
        if (c < 0 || !ready[c]) {
            return -TcpError.INVALID;
        }
        ready[c] = false;
        counters.completionNotices.incrementRelease();
        return 0;
    }

    /** New data was acknowledged on row {@code c} (per ACK): the sends it covers complete. */
    void acknowledged(int c) {
        if (pending[c] == 0) {
            return;
        }
        final long acked = tcb.bytesAcked(c);
        final long[] ring = ends[c];
        int done = 0;
        while (done < pending[c] && ring[(head[c] + done) % MAX_PENDING] <= acked) {
            done++;
        }
        complete(c, done);
    }

    /** The connection ended: its sends still waiting complete now, so each id gets its notice. */
    void ended(int c) {
        complete(c, pending[c]);
    }

    private void complete(int c, int done) {
        if (done == 0) {
            return;
        }
        final int firstDone = nextId[c] - pending[c];
        head[c] = (head[c] + done) % MAX_PENDING;
        pending[c] -= done;
        if (!ready[c]) {
            ready[c] = true;
            first[c] = firstDone;
        }
        last[c] = firstDone + done - 1;
        counters.completionsDone.getAndAddRelease(done);
        events.signal(c, TcpControlBlocks.EV_COMPLETED);
    }

    /** The row is freed: the next connection in it starts with the option off and id 0. */
    void forget(int c) {
        enabled[c] = false;
        nextId[c] = 0;
        head[c] = 0;
        pending[c] = 0;
        ready[c] = false;
    }
}
