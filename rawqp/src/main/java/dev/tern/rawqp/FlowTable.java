package dev.tern.rawqp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The flow-steering rules of one link's queue pair: the fixed rules installed at open (by default our MAC and
 * broadcast), plus one rule per joined multicast MAC, reference-counted as the {@code Link} contract asks.
 *
 * <p>Rules are installed and removed by an {@link Installer}: {@code ibv_create_flow}/{@code ibv_destroy_flow} on
 * a device, a recorder in tests. Control plane: called on the link's owner thread, allocates freely.
 */
final class FlowTable implements AutoCloseable {
    /** Puts rules into the NIC and takes them out again. */
    interface Installer {
        /** Installs {@code rule}; returns a handle for {@link #remove}. */
        long install(FlowRule rule);

        void remove(long handle);
    }

    private final Installer installer;
    private final Map<FlowRule, Long> fixed = new LinkedHashMap<>();
    private final Map<Long, Long> multicastHandles = new LinkedHashMap<>();
    private final Map<Long, Integer> multicastRefs = new LinkedHashMap<>();
    private boolean closed;

    /** Installs {@code rules} in order; if one fails, removes those already installed and rethrows. */
    FlowTable(Installer installer, List<FlowRule> rules) {
        this.installer = installer;
        try {
            for (FlowRule rule : rules) {
                fixed.put(rule, installer.install(rule));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    void addMulticast(long mac) {
        final int refs = multicastRefs.getOrDefault(mac, 0);
        if (refs == 0) {
            multicastHandles.put(mac, installer.install(FlowRule.destinationMac(mac)));
        }
        multicastRefs.put(mac, refs + 1);
    }

    void removeMulticast(long mac) {
        final int refs = multicastRefs.getOrDefault(mac, 0);
        if (refs == 0) {
            return;
        }
        if (refs == 1) {
            multicastRefs.remove(mac);
            installer.remove(multicastHandles.remove(mac));
        } else {
            multicastRefs.put(mac, refs - 1);
        }
    }

    /** The rules in force now: fixed rules first, then one per joined multicast MAC. */
    List<FlowRule> rules() {
        final List<FlowRule> rules = new ArrayList<>(fixed.keySet());
        for (long mac : multicastHandles.keySet()) {
            rules.add(FlowRule.destinationMac(mac));
        }
        return rules;
    }

    /** Removes every rule, newest first; tries them all and rethrows the first failure. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        final List<Long> handles = new ArrayList<>(fixed.values());
        handles.addAll(multicastHandles.values());
        fixed.clear();
        multicastHandles.clear();
        multicastRefs.clear();
        RuntimeException failure = null;
        for (int i = handles.size() - 1; i >= 0; i--) {
            try {
                installer.remove(handles.get(i));
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
