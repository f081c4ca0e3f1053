package dev.tern.nio;

import java.lang.reflect.InvocationTargetException;
import java.nio.channels.spi.SelectorProvider;

/**
 * The JDK's own {@link SelectorProvider} (epoll on Linux), which serves every channel the rules give to the kernel.
 *
 * <p>When Tern's provider is the system-wide one ({@code -Djava.nio.channels.spi.SelectorProvider}, as under
 * {@code tern exec}), {@link SelectorProvider#provider()} returns Tern's, and the JDK offers no public way to the
 * default one. We then call {@code sun.nio.ch.DefaultSelectorProvider.get()}, which needs the package exported to
 * us: the agent behind {@code tern exec} exports it at start-up; an embedder who sets the property by hand passes
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED}. When Tern's provider is only used where the code asks for
 * it ({@code TernSelectorProvider.open(...)}), the system-wide provider is the JDK's and nothing is needed.
 */
final class KernelProvider {
    private static volatile SelectorProvider provider;

    private KernelProvider() {
    }

    static SelectorProvider get() {
        SelectorProvider found = provider;
        if (found == null) {
            found = find();
            provider = found;
        }
        return found;
    }

    private static SelectorProvider find() {
        final SelectorProvider systemWide = SelectorProvider.provider();
        if (systemWide != null && !(systemWide instanceof TernSelectorProvider)) {
            return systemWide;
        }
        try {
            return (SelectorProvider) Class.forName("sun.nio.ch.DefaultSelectorProvider").getMethod("get").invoke(null);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Tern's provider is the system-wide one and needs the JDK's own for kernel "
                + "channels: add --add-exports java.base/sun.nio.ch=ALL-UNNAMED (tern exec does)", e);
        } catch (ClassNotFoundException | NoSuchMethodException | InvocationTargetException e) {
            throw new IllegalStateException("cannot find the JDK's default SelectorProvider: " + e, e);
        }
    }
}
