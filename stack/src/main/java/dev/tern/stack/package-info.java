/** NetStack: assembles the layers, runs the poll loop, and offers the public socket API. */
package dev.tern.stack;
