package dev.tern.afxdp.sys;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a constant that must equal a C expression evaluated against the installed kernel headers
 * ({@code <linux/if_xdp.h>}, {@code <linux/bpf.h>}, {@code <linux/if_link.h>}); the ABI test compiles a program that
 * prints every such expression and compares.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface CAbi {
    /** The C expression, e.g. {@code offsetof(struct sockaddr_xdp, sxdp_queue_id)}. */
    String value();
}
