package dev.tern.rawqp.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * How the bindings call C on the control plane: every downcall captures {@code errno}
 * ({@link Linker.Option#captureCallState}), because libibverbs reports most failures as NULL plus errno and the
 * value is gone by the time any later Java code could ask. errno is meaningful only when the call failed.
 *
 * <p>Calls go through {@link MethodHandle#invokeWithArguments}: they allocate, which is fine here (opening a link,
 * creating a flow) and never happens per packet. Stateless and thread-safe.
 */
// Binding C means restricted FFM methods (reinterpret, downcalls); the JVM runs with --enable-native-access.
@SuppressWarnings("restricted")
final class ControlCalls {
    static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private ControlCalls() {
    }

    /** A call's return value and the errno captured right after it. */
    record Returned(Object value, int errno) {
        MemorySegment pointer() {
            return (MemorySegment) value;
        }

        int status() {
            return (Integer) value;
        }
    }

    /** dlopen()s {@code soname} for the life of the process, or explains which package to install. */
    static SymbolLookup open(String soname, String debianPackages) {
        try {
            return SymbolLookup.libraryLookup(soname, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new NativeLibraryException(soname + " not found: install the Debian package" + (debianPackages.contains(" and ") ? "s " : " ")
                + debianPackages);
        }
    }

    /** A downcall to an exported symbol. dlsym gives the default symbol version (e.g. {@code ibv_reg_mr@@IBVERBS_1.1}), which is the one to use. */
    static MethodHandle bind(SymbolLookup library, String soname, String symbol, FunctionDescriptor descriptor) {
        final MemorySegment address = library.find(symbol)
            .orElseThrow(() -> new NativeLibraryException(soname + " has no symbol " + symbol + " (rdma-core too old?)"));
        return LINKER.downcallHandle(address, descriptor, CAPTURE_ERRNO);
    }

    /** A downcall to a function pointer read from a provider's table (verbs.h inlines call these). */
    static MethodHandle bind(MemorySegment function, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(function, descriptor, CAPTURE_ERRNO);
    }

    static Returned call(MethodHandle handle, Object... arguments) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment state = arena.allocate(CALL_STATE);
            final Object[] withState = new Object[arguments.length + 1];
            withState[0] = state;
            System.arraycopy(arguments, 0, withState, 1, arguments.length);
            final Object value = handle.invokeWithArguments(withState);
            return new Returned(value, (int) ERRNO.get(state, 0L));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("native call failed unexpectedly", t);
        }
    }

    /** The pointer a call returned, or a {@link VerbsException} naming the call and errno when it returned NULL. */
    static MemorySegment pointerOrThrow(String call, Returned returned, String hint) {
        final MemorySegment pointer = returned.pointer();
        if (pointer.address() == 0) {
            throw new VerbsException(call, returned.errno(), hint);
        }
        return pointer;
    }

    /**
     * Checks a call that returns 0 on success. libibverbs returns the errno value itself from most of these
     * ({@code ibv_modify_qp}, {@code ibv_destroy_*}); a few return -1 and set errno. Both are handled.
     */
    static void zeroOrThrow(String call, Returned returned, String hint) {
        final int status = returned.status();
        if (status != 0) {
            throw new VerbsException(call, status > 0 ? status : returned.errno(), hint);
        }
    }
}
