package dev.tern.tcp;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The implementations of one plug point ({@link CongestionControl}, {@link LossDetection}, {@link LossRecovery})
 * registered with a layer, by name and by index: a connection's row keeps the index, the hot path reads an array.
 * Registering is a cold path; a later registration under a taken name replaces the earlier one.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class PlugPoints<T> {
    private final String what;
    private Object[] byId = new Object[0];
    private final List<String> names = new ArrayList<>();

    PlugPoints(String what) {
        this.what = what;
    }

    private static String nameOf(Object plugPoint) {
        return switch (plugPoint) {
            case CongestionControl cc -> cc.name();
            case LossDetection detection -> detection.name();
            case LossRecovery recovery -> recovery.name();
            default -> throw new IllegalArgumentException("not a plug point: " + plugPoint);
        };
    }

    /** Adds (or replaces, by name) an implementation; returns its index. */
    int register(T plugPoint) {
        final String name = nameOf(plugPoint);
        final int existing = names.indexOf(name);
        if (existing >= 0) {
            byId[existing] = plugPoint;
            return existing;
        }
        byId = Arrays.copyOf(byId, byId.length + 1);
        byId[byId.length - 1] = plugPoint;
        names.add(name);
        return byId.length - 1;
    }

    /** The index of {@code name}, or -1. */
    int id(String name) {
        return names.indexOf(name);
    }

    /** The index of {@code name}; an unknown name is a configuration error naming the valid ones. */
    int require(String name) {
        final int id = id(name);
        if (id < 0) {
            throw new IllegalArgumentException("unknown " + what + " '" + name + "' (valid: "
                + String.join(", ", names) + ")");
        }
        return id;
    }

    @SuppressWarnings("unchecked")
    T get(int id) {
        return (T) byId[id];
    }

    List<String> names() {
        return List.copyOf(names);
    }
}
