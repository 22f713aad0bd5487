/*
 * test_child.h — running part of a test in a forked child (a crash, a hang
 * cut by an alarm, or a memory limit stays there) and bringing its
 * fixed-size result back through a pipe. Header only; POSIX; include after
 * <cmocka.h>.
 */
#ifndef MOPT_TESTS_TEST_CHILD_H
#define MOPT_TESTS_TEST_CHILD_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs fn(arg, res) in a child, which sends back res (n bytes, starting as
 * the caller's res at the fork) and exits 0 (3 when the write fails). The
 * parent reads the bytes into res and waits for the child: returns how many
 * bytes arrived (n unless the child died first), with its wait status in
 * *ws. */
static inline size_t test_in_child(void (*fn)(const void *arg, void *res), const void *arg,
                                   void *res, size_t n, int *ws) {
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        fn(arg, res);
        ssize_t w = write(fd[1], res, n);
        _exit(w == (ssize_t)n ? 0 : 3);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd[0], (char *)res + got, n - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    *ws = 0;
    assert_int_equal(waitpid(pid, ws, 0), pid);
    return got;
}

#endif
