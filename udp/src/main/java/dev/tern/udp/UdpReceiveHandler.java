package dev.tern.udp;

import java.lang.foreign.MemorySegment;

/**
 * Zero-copy receive for UDP: the owner of a socket takes each datagram where it lies instead of receiving it from the
 * socket's receive ring ({@link UdpLayer#receiveHandler}). A datagram is offered in place in the link's frame when
 * nothing older waits in the ring; one the handler declines is queued in the ring as without a handler, and the ring
 * is offered again, oldest first, before the next datagram and when the owner asks ({@link UdpLayer#deliverQueued}).
 *
 * <p>Called on the stack thread, in the middle of input. The view {@code [offset, offset + length)} of {@code data}
 * is valid only until the call returns. The handler may queue datagrams to send; it must not close the socket nor
 * change its handler ({@link UdpLayer} refuses with an {@link IllegalStateException}, counted like any exception out
 * of the handler as {@code udp.rx.handler_errors}, the datagram then queued). Must not allocate on the hot path.
 */
@FunctionalInterface
public interface UdpReceiveHandler {
    /**
     * Offers one datagram of {@code length} bytes (possibly 0) from {@code sourceAddress:sourcePort}, addressed as
     * {@code kind} (0 unicast, 1 broadcast, 2 multicast). Returns true when the handler took it, false to have it
     * queued and offered again later.
     */
    boolean onDatagram(int socket, int sourceAddress, int sourcePort, int kind, MemorySegment data, long offset,
                       int length);
}
