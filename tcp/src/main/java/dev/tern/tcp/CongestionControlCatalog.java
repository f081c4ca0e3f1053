package dev.tern.tcp;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The congestion controls a name can select: the built-in ones, those a jar on the class path offers as services
 * ({@code META-INF/services/dev.tern.tcp.CongestionControl}, {@link ServiceLoader}), and any class named in full that
 * implements {@link CongestionControl} with a public no-arg constructor. A layer registers the built-in and
 * discovered ones when it starts and loads a class the first time a connection names it; the CLI checks its
 * {@code --cc} here. A name taken twice is an error rather than a silent replacement: a jar on the class path must
 * not change what "cubic" means.
 *
 * <p>Cold path: every call scans the class path or loads a class, and returns new instances.
 */
public final class CongestionControlCatalog {
    private final ClassLoader loader;

    /** A catalog that discovers services and loads classes through {@code loader}. */
    public CongestionControlCatalog(ClassLoader loader) {
        this.loader = Objects.requireNonNull(loader, "loader");
    }

    /** The catalog of the current thread's context class loader: the application's, unless it set another. */
    public static CongestionControlCatalog ofContext() {
        final ClassLoader context = Thread.currentThread().getContextClassLoader();
        return new CongestionControlCatalog(context != null ? context : CongestionControl.class.getClassLoader());
    }

    /** New instances of the built-in controls, in {@link TcpLayer#BUILT_IN_CONGESTION_CONTROLS} order. */
    public static List<CongestionControl> builtIns() {
        return List.of(new CubicCongestionControl(), new NewRenoCongestionControl(), new NoCongestionControl(),
            new DctcpCongestionControl(), new BbrCongestionControl());
    }

    /**
     * New instances of the controls the class path offers as services. A broken services entry, or a name a
     * built-in or another service already has, is an {@link IllegalArgumentException} saying which.
     */
    public List<CongestionControl> discovered() {
        final List<CongestionControl> taken = new ArrayList<>(builtIns());
        final List<CongestionControl> found = new ArrayList<>();
        try {
            for (CongestionControl candidate : ServiceLoader.load(CongestionControl.class, loader)) {
                checkNameIsFree(candidate, taken, "service " + candidate.getClass().getName());
                taken.add(candidate);
                found.add(candidate);
            }
        } catch (ServiceConfigurationError e) {
            throw new IllegalArgumentException("META-INF/services/" + CongestionControl.class.getName() + ": "
                + e.getMessage(), e);
        }
        return List.copyOf(found);
    }

    /** The names a connection can choose without naming a class: the built-in ones, then the discovered ones. */
    public List<String> names() {
        final List<String> names = new ArrayList<>();
        for (CongestionControl known : known()) {
            names.add(known.name());
        }
        return List.copyOf(names);
    }

    /**
     * The control {@code name} selects: a built-in or discovered one by its name, or a new instance of the class
     * {@code name} names in full (a name with a dot). Otherwise an {@link IllegalArgumentException} naming the valid
     * names, or the class and why it cannot be used.
     */
    public CongestionControl resolve(String name) {
        final List<CongestionControl> known = known();
        for (CongestionControl candidate : known) {
            if (candidate.name().equals(name)) {
                return candidate;
            }
        }
        if (name.indexOf('.') < 0) {
            throw new IllegalArgumentException("unknown congestion control '" + name + "' (valid: "
                + String.join(", ", names()) + ", or a class name)");
        }
        final CongestionControl loaded = load(name);
        checkNameIsFree(loaded, known, "class " + name);
        return loaded;
    }

    /** A new instance of the class named in full, or an {@link IllegalArgumentException} saying why not. */
    public CongestionControl load(String className) {
        final Class<?> type;
        try {
            type = Class.forName(className, true, loader);
        } catch (ClassNotFoundException e) {
            throw unusable(className, "not found");
        } catch (LinkageError e) {
            throw unusable(className, "cannot be loaded (" + e + ")");
        }
        if (!CongestionControl.class.isAssignableFrom(type)) {
            throw unusable(className, "not a " + CongestionControl.class.getName());
        }
        if (Modifier.isAbstract(type.getModifiers()) || !Modifier.isPublic(type.getModifiers())) {
            throw unusable(className, "not a public concrete class");
        }
        final Constructor<?> constructor;
        try {
            constructor = type.getConstructor();
        } catch (NoSuchMethodException e) {
            throw unusable(className, "no public no-arg constructor");
        }
        try {
            return (CongestionControl) constructor.newInstance();
        } catch (InvocationTargetException e) {
            throw unusable(className, "constructor threw " + e.getCause());
        } catch (ReflectiveOperationException e) {
            throw unusable(className, "cannot be instantiated (" + e + ")");
        }
    }

    private List<CongestionControl> known() {
        final List<CongestionControl> known = new ArrayList<>(builtIns());
        known.addAll(discovered());
        return known;
    }

    /** Another class already answering to the candidate's name would make the name mean two things. */
    private static void checkNameIsFree(CongestionControl candidate, List<CongestionControl> known, String source) {
        for (CongestionControl other : known) {
            if (other.name().equals(candidate.name()) && other.getClass() != candidate.getClass()) {
                throw new IllegalArgumentException("congestion control " + source + " is named '" + candidate.name()
                    + "', which " + other.getClass().getName() + " already is");
            }
        }
    }

    private static IllegalArgumentException unusable(String className, String reason) {
        return new IllegalArgumentException("congestion control class " + className + ": " + reason);
    }
}
