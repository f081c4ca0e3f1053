package dev.tern.tcp;

/**
 * What a listener or connection tells its owner, called on the stack thread from {@link TcpLayer#poll} (never in the
 * middle of processing a segment, so every API call is allowed inside). Implementations must not allocate on the hot
 * path. Events for one connection are coalesced per poll: several segments of data give one {@link #readable}.
 *
 * <p>No event is delivered for a connection after its owner called {@link TcpLayer#close} or
 * {@link TcpLayer#abort}, nor for a passive connection before it was {@link TcpLayer#accept}ed.
 */
public interface TcpEvents {
    /** A connection completed its handshake and waits in the listener's accept queue. */
    default void acceptable(int listener) {
    }

    /** An active open completed: data may flow. */
    default void established(int connection) {
    }

    /** Data arrived in the receive buffer, or the peer closed its side (end of stream). */
    default void readable(int connection) {
    }

    /** Acknowledged data left the send buffer: there is room to write. */
    default void writable(int connection) {
    }

    /** Tracked sends completed: a notice waits in {@link SendCompletions} (Linux's EPOLLERR of MSG_ZEROCOPY). */
    default void sendsCompleted(int connection) {
    }

    /**
     * The connection can carry no more data either way: both sides closed ({@code error} {@link TcpError#NONE}), or it
     * was refused, reset or timed out. The owner still calls {@link TcpLayer#close} to release the handle.
     */
    default void closed(int connection, int error) {
    }

    /** An owner that ignores every event. */
    TcpEvents NONE = new TcpEvents() {
    };
}
