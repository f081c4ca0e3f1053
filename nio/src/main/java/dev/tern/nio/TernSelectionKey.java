package dev.tern.nio;

import dev.tern.stack.SelectableSocket;

import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectionKey;

/**
 * A channel's registration with a {@link TernSelector}. Its interest set may change from any thread; the ready set
 * is written by the selecting thread. Behind it is either a registration with the stack's
 * {@link dev.tern.stack.Selector} (a Tern socket) or a key of the selector's inner kernel selector.
 */
final class TernSelectionKey extends AbstractSelectionKey {
    private final TernChannel channel;
    private final TernSelector selector;
    private volatile int interestOps;
    private volatile int readyOps;
    /** Where the key is in its selector's selected-key set; -1 when not there. Selecting thread. */
    int selectedIndex = -1;
    /** The Tern sockets this key watches (attached: one, or a listener per shard), or null. Guarded by this key. */
    volatile SelectableSocket[] sockets;
    /** The kernel key this key stands for (attached), or null. Guarded by this key. */
    volatile SelectionKey kernelKey;

    TernSelectionKey(TernChannel channel, TernSelector selector, int interestOps) {
        this.channel = channel;
        this.selector = selector;
        this.interestOps = interestOps;
    }

    TernChannel ternChannel() {
        return channel;
    }

    TernSelector selectorImpl() {
        return selector;
    }

    @Override
    public SelectableChannel channel() {
        return (SelectableChannel) channel;
    }

    @Override
    public Selector selector() {
        return selector;
    }

    private void ensureValid() {
        if (!isValid()) {
            throw new CancelledKeyException();
        }
    }

    @Override
    public int interestOps() {
        ensureValid();
        return interestOps;
    }

    /** The interest set without the validity check (the selector's own use). */
    int interest() {
        return interestOps;
    }

    @Override
    public SelectionKey interestOps(int ops) {
        ensureValid();
        if ((ops & ~channel().validOps()) != 0) {
            throw new IllegalArgumentException("Invalid interest ops: " + ops);
        }
        interestOps = ops;
        selector.interestChanged(this);
        return this;
    }

    @Override
    public synchronized int interestOpsOr(int ops) {
        return swapInterest(interestOps() | ops);
    }

    @Override
    public synchronized int interestOpsAnd(int ops) {
        return swapInterest(interestOps() & ops);
    }

    private int swapInterest(int ops) {
        final int old = interestOps;
        interestOps(ops);
        return old;
    }

    @Override
    public int readyOps() {
        ensureValid();
        return readyOps;
    }

    int ready() {
        return readyOps;
    }

    void ready(int ops) {
        readyOps = ops;
    }

    @Override
    public String toString() {
        return "TernSelectionKey[" + (isValid() ? "interest=" + interestOps + ", ready=" + readyOps : "invalid") + "] "
            + channel;
    }
}
