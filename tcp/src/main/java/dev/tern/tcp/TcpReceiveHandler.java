package dev.tern.tcp;

import java.lang.foreign.MemorySegment;

/**
 * Zero-copy receive: the owner of a connection takes received bytes where they lie instead of reading them out of the
 * connection's receive ring ({@link TcpLayer#receiveHandler}). In-order segment text is offered in place in the
 * link's frame; what the handler does not take is copied into the receive ring as without a handler, and offered
 * again, before anything newer, at the next in-order segment or when the owner asks ({@link TcpLayer#deliverReceived}).
 * Bytes taken count as read at once: the window the next ACK advertises already has room for them.
 *
 * <p>Called on the stack thread, in the middle of segment input. The view {@code [offset, offset + length)} of
 * {@code data} is valid only until the call returns: the frame (or the ring's room) is reused after it. Inside the
 * call the handler may write to the connection (the data leaves when the layer serves its output queue, in the same
 * poll); it must not close, abort or shut the connection down, nor change its handler: {@link TcpLayer} refuses those
 * with an {@link IllegalStateException}, which, like any exception thrown out of the handler, is counted
 * ({@code tcp.rx.handler_errors}) and taken as consuming nothing. Must not allocate on the hot path.
 */
@FunctionalInterface
public interface TcpReceiveHandler {
    /**
     * Offers the next {@code length} bytes of the stream (never 0); returns how many the handler took, from the
     * first: 0 to {@code length} (values outside are clamped).
     */
    int onReceive(int connection, MemorySegment data, long offset, int length);
}
