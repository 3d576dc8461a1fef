import { execFileSync } from 'node:child_process';

/**
 * What one callgrind dump counted: every user-space instruction, and two parts of it that are
 * V8's own upkeep. Read by `callgrind_annotate` (part of valgrind), whose per-function self
 * costs add up to the total.
 */
export interface Counted {
  total: number;
  /** V8's optimising compilers and deoptimiser: still compiling means the count is not warm */
  compiler: number;
  /** the garbage collector: scavenges, marking, sweeping */
  gc: number;
}

const COMPILER = /v8::internal::(?:compiler|maglev|turboshaft)::|v8::internal::(?:Compiler|Deoptimizer|OptimizedCompilationJob|TurbofanCompilationJob|OptimizingCompileDispatcher)\b/;
const GC =
  /v8::internal::(?:Scavenger|ScavengerCollector|ScavengeVisitor|MarkCompactCollector|MinorMarkCompactCollector|Sweeper|ConcurrentMarking|IncrementalMarking|Heap::|EvacuationAllocator|MarkingBarrier|MarkingVisitorBase|MainMarkingVisitor|Evacuator|RootScavengeVisitor|ArrayBufferSweeper)|heap::base::|IterateObjectCache|IteratePointers<v8::internal::(?:ScavengeVisitor|IterateAndScavengePromotedObjectsVisitor|MainMarkingVisitor)/;

/** One line of callgrind_annotate's function list: `1,234,567 ( 1.23%)  file:function [object]`. */
const LINE = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/;

/** Adds up callgrind_annotate's function list (its text), and the compiler's and collector's lines. */
export function classify(annotated: string): Counted {
  const counted: Counted = { total: 0, compiler: 0, gc: 0 };
  for (const line of annotated.split('\n')) {
    const m = LINE.exec(line);
    if (!m || m[2]!.includes('PROGRAM TOTALS')) continue;
    const n = Number(m[1]!.replace(/,/g, ''));
    counted.total += n;
    if (COMPILER.test(m[2]!)) counted.compiler += n;
    else if (GC.test(m[2]!)) counted.gc += n;
  }
  return counted;
}

export function countCallgrind(file: string): Counted {
  const counted = classify(execFileSync('callgrind_annotate', ['--threshold=100', '--auto=no', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }));
  if (counted.total === 0) throw new Error(`callgrind_annotate found no functions in ${file}`);
  return counted;
}
