package dev.tern.nio;

import dev.tern.stack.SelectableSocket;

import java.nio.channels.SelectableChannel;

/**
 * What a {@link TernSelector} needs of the channels it serves. A channel is served by Tern or by the kernel, and
 * learns which only when it is bound, connected, sent from or joined ({@link Rules}); until then it has neither,
 * and a key registered meanwhile is attached to the side chosen when the channel decides ({@link ChannelKeys}).
 */
interface TernChannel {
    /** The Tern socket serving the channel, or null (not decided yet, or the kernel's). */
    SelectableSocket ternSocket();

    /**
     * Every Tern socket serving the channel (a server channel of a sharded stack has a listener on each shard), or
     * null; a selector watches them all.
     */
    default SelectableSocket[] ternSockets() {
        final SelectableSocket socket = ternSocket();
        return socket == null ? null : new SelectableSocket[] {socket};
    }

    /** The kernel channel serving the channel, or null (not decided yet, or Tern's). */
    SelectableChannel kernelChannel();

    /** The JDK's ready operations for Tern's readiness bits {@code ternReady}, within {@code interestOps}. */
    int translateReadyOps(int ternReady, int interestOps);

    /** Tern's readiness bits to watch for the JDK's {@code interestOps}. */
    int ternInterest(int interestOps);

    /** The keys of this channel's registrations, told when the channel decides its side. */
    ChannelKeys keys();
}
