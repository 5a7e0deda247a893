/* mapeval_xfer: a Valgrind tool writing the four function-level logs of Kim & Edwards'
   accelerator-store study: for every byte a function reads, the
   function invocation that last wrote it; per invocation, its arithmetic/logic and
   other instructions; the call tree.

   Written for mapeval; built by mapping/profiler/build.py against the tool headers and
   static libraries of the installed Valgrind.  Options:
     --outdir=DIR   where the logs go (function, subcalls, icount, xfers); required
     --root=NAME    record from this function down (default main); code outside it
                    (the dynamic loader, libc start-up and exit) is not recorded

   Invocations.  A function is entered when an instruction at the entry address of a
   function symbol runs (VG_(get_fnname_if_entry)), whether reached by a call or a jump
   (a PLT stub jumps to the library function).  Each thread has a shadow call stack of
   (stack pointer at entry, invocation).  The stack grows down, so:
     - at the start of every superblock, frames whose entry stack pointer lies below the
       current one have returned (a ret, a longjmp, a signal return) and are popped;
     - on entry, the new invocation is pushed on top.  A tail call (a jump to a function
       that leaves no return address, as getchar's jump to __uflow) enters with the
       jumping frame's stack pointer: the callee becomes a child of the invocation that
       jumped, and both frames end at the same return.
   An invocation's parent is the frame below it.  Ids count from 1 in call order.

   Instructions.  Each guest instruction is counted once, for the invocation running it,
   as arithmetic/logic or other.  The rule: an instruction is arithmetic/logic when it
   sets the condition codes (cmp, test, and every flag-setting ALU instruction) or when
   a value computed by an arithmetic/logic IR operation of the instruction itself --
   integer Add, Sub, Mul, Div, Mod, And, Or, Xor, Not, Shl, Shr, Sar, Cmp*, Clz, Ctz,
   PopCount; floating-point Add, Sub, Mul, Div, Neg, Abs, Sqrt, Cmp, fused multiply-add;
   the SSE and AVX (128- and 256-bit) vector forms -- is written to a register other
   than the stack and instruction pointers, or to memory.  Address arithmetic
   (mov rax,[rbx+8]) and stack-pointer updates (push, call) are not arithmetic; lea,
   which writes an address to a register, is.
   The rule reads each instruction's IR as Valgrind's front end made it: the tool turns
   VEX's IR optimiser off (iropt level 0, as --vex-iropt-level=0 would), because the
   optimiser works across instructions and would make a class depend on the neighbours.
   It drops a register write, and a condition-code write, that a later instruction of
   the superblock overwrites (in rol; add; xor on one register only the xor kept
   either), folds constants (pxor of a register with itself), merges equal computations
   (two identical lea) and turns the condition-code helper of a setcc after a cmp into a
   compare of the setcc's own.  Before it, an instruction's IR is its own: the front
   end's minimal pass only replaces reads of registers written earlier in the
   superblock by the values written and propagates copies, which moves no operation
   and removes no write.  Valgrind's clean-up after instrumentation still folds
   constants and removes dead code from the code that runs.

   Transfers.  Shadow memory maps every byte to the invocation that last wrote it (0:
   none recorded) and the one that last read it.  A load of byte b by invocation c adds
   one byte to (c, writer(b)), unless c is already b's last reader: as in Kim & Edwards'
   pintool, an invocation re-reading data it already learned is no new transfer (a
   write makes the byte new again).
   System calls count as accesses of the invocation issuing them (the libc wrapper):
   the bytes a read(2) fills are written by it, the bytes a write(2) sends are read by
   it (strings such as file names are not counted: reading them from here could fault).
   Fresh and unmapped memory has no writer.
*/

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "libvex_guest_amd64.h"

/* ------------------------------------------------------------------ options */

static const HChar *clo_outdir = NULL;
static const HChar *clo_root = "main";

static Bool xf_process_cmd_line_option(const HChar *arg)
{
   if VG_STR_CLO(arg, "--outdir", clo_outdir) {}
   else if VG_STR_CLO(arg, "--root", clo_root) {}
   else return False;
   return True;
}

static void xf_print_usage(void)
{
   VG_(printf)("    --outdir=DIR     write the logs function, subcalls, icount, xfers in DIR\n"
               "    --root=NAME      record from function NAME down [main]\n");
}

static void xf_print_debug_usage(void) {}

/* ------------------------------------------------------------------ functions */

/* Interned function names: a name's id is its index. */
static HChar **fn_names = NULL;
static UInt fn_count = 0, fn_cap = 0;
static UInt root_fn = 0xFFFFFFFF;

static UInt intern_fn(const HChar *name)
{
   UInt i;
   for (i = 0; i < fn_count; i++)       /* few distinct names; only at translation */
      if (VG_(strcmp)(fn_names[i], name) == 0) return i;
   if (fn_count == fn_cap) {
      fn_cap = fn_cap ? 2 * fn_cap : 256;
      fn_names = VG_(realloc)("xf.fn", fn_names, fn_cap * sizeof(HChar *));
   }
   fn_names[fn_count] = VG_(strdup)("xf.fn.name", name);
   return fn_count++;
}

/* ------------------------------------------------------------------ the logs */

typedef struct { Int fd; HChar buf[1 << 16]; Int used; } Out;

static void out_open(Out *out, const HChar *name)
{
   HChar *path = VG_(malloc)("xf.path", VG_(strlen)(clo_outdir) + VG_(strlen)(name) + 2);
   SysRes r;
   VG_(sprintf)(path, "%s/%s", clo_outdir, name);
   r = VG_(open)(path, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, VKI_S_IRUSR | VKI_S_IWUSR
                 | VKI_S_IRGRP | VKI_S_IROTH);
   if (sr_isError(r)) {
      VG_(umsg)("mapeval_xfer: cannot write %s\n", path);
      VG_(exit)(3);
   }
   out->fd = sr_Res(r);
   out->used = 0;
   VG_(free)(path);
}

static void out_flush(Out *out)
{
   Int done = 0;
   while (done < out->used) {
      Int n = VG_(write)(out->fd, out->buf + done, out->used - done);
      if (n <= 0) { VG_(umsg)("mapeval_xfer: write failed\n"); VG_(exit)(3); }
      done += n;
   }
   out->used = 0;
}

static void out_line(Out *out, const HChar *text)
{
   Int n = VG_(strlen)(text);
   if (out->used + n > (Int)sizeof(out->buf)) out_flush(out);
   VG_(memcpy)(out->buf + out->used, text, n);
   out->used += n;
}

static void out_close(Out *out)
{
   out_flush(out);
   VG_(close)(out->fd);
}

static Out log_out, xfers_out;

/* ------------------------------------------------------------------ invocations */

typedef struct {
   UInt fn, parent;
   ULong arith, other;
} Invocation;

static Invocation *invs = NULL;       /* invs[0] unused: id 0 means "not recorded" */
static UInt inv_count = 1, inv_cap = 0;

static UInt new_invocation(UInt fn, UInt parent)
{
   if (inv_count >= inv_cap) {
      inv_cap = inv_cap ? 2 * inv_cap : 4096;
      invs = VG_(realloc)("xf.inv", invs, inv_cap * sizeof(Invocation));
   }
   invs[inv_count].fn = fn;
   invs[inv_count].parent = parent;
   invs[inv_count].arith = invs[inv_count].other = 0;
   return inv_count++;
}

/* A live invocation.  The bytes it reads are summed per producer in the frame (a few
   producers each; more spill into a table) and written to the xfers log when it
   returns, as the pintool did: memory stays bounded by the call depth. */
#define FRAME_PRODUCERS 8
typedef struct {
   Addr sp;
   UInt inv, n;
   UInt producer[FRAME_PRODUCERS];
   ULong bytes[FRAME_PRODUCERS];
} Frame;
typedef struct { Frame *frames; Int depth, cap; } Stack;

#define MAX_THREADS 1024
static Stack stacks[MAX_THREADS];
static Stack *stack = &stacks[1];     /* the running thread's */
static UInt cur = 0;                  /* the running invocation (0: not recorded) */

static void set_cur(void)
{
   cur = stack->depth ? stack->frames[stack->depth - 1].inv : 0;
}

static void xf_start_client_code(ThreadId tid, ULong blocks)
{
   tl_assert(tid < MAX_THREADS);
   stack = &stacks[tid];
   set_cur();
}

static void write_xfer(UInt consumer, UInt producer, ULong bytes)
{
   HChar line[64];
   VG_(sprintf)(line, "%u %u %llu\n", consumer, producer, bytes);
   out_line(&xfers_out, line);
}

static void pop(void)
{
   Frame *f = &stack->frames[--stack->depth];
   UInt k;
   for (k = 0; k < f->n; k++) write_xfer(f->inv, f->producer[k], f->bytes[k]);
}

/* Frames entered with a stack pointer below sp have returned. */
static VG_REGPARM(1) void on_block(Addr sp)
{
   while (stack->depth && stack->frames[stack->depth - 1].sp < sp) pop();
   set_cur();
}

static VG_REGPARM(2) void on_entry(UWord fn, Addr sp)
{
   UInt parent, inv;
   while (stack->depth && stack->frames[stack->depth - 1].sp < sp) pop();
   parent = stack->depth ? stack->frames[stack->depth - 1].inv : 0;
   inv = (parent || fn == root_fn) ? new_invocation((UInt)fn, parent) : 0;
   if (stack->depth == stack->cap) {
      stack->cap = stack->cap ? 2 * stack->cap : 256;
      stack->frames = VG_(realloc)("xf.stack", stack->frames, stack->cap * sizeof(Frame));
   }
   stack->frames[stack->depth].sp = sp;
   stack->frames[stack->depth].inv = inv;
   stack->frames[stack->depth].n = 0;
   stack->depth++;
   cur = inv;
}

static VG_REGPARM(2) void on_count(UWord arith, UWord other)
{
   if (cur) {
      invs[cur].arith += arith;
      invs[cur].other += other;
   }
}

/* ------------------------------------------------------------------ transfers */

/* Spilled (consumer, producer) -> bytes, open addressing; key 0 is free (consumers are
   >= 1) */
static ULong *xf_keys = NULL, *xf_bytes = NULL;
static UWord xf_cap = 0, xf_used = 0;

static ULong *xfer_slot(ULong key)
{
   UWord i, mask;
   if (2 * (xf_used + 1) > xf_cap) {
      ULong *keys = xf_keys, *bytes = xf_bytes;
      UWord old = xf_cap, j;
      xf_cap = xf_cap ? 2 * xf_cap : 1 << 14;
      xf_keys = VG_(calloc)("xf.xk", xf_cap, sizeof(ULong));
      xf_bytes = VG_(calloc)("xf.xb", xf_cap, sizeof(ULong));
      xf_used = 0;
      for (j = 0; j < old; j++)
         if (keys[j]) { *xfer_slot(keys[j]) = bytes[j]; }
      if (keys) { VG_(free)(keys); VG_(free)(bytes); }
   }
   mask = xf_cap - 1;
   i = (UWord)((key * 0x9E3779B97F4A7C15ULL) >> 20) & mask;
   while (xf_keys[i] && xf_keys[i] != key) i = (i + 1) & mask;
   if (!xf_keys[i]) { xf_keys[i] = key; xf_used++; }
   return &xf_bytes[i];
}

static void add_xfer(UInt consumer, UInt producer, ULong bytes)
{
   Frame *f = stack->depth ? &stack->frames[stack->depth - 1] : NULL;
   UInt k;
   if (f && f->inv == consumer) {
      for (k = 0; k < f->n; k++)
         if (f->producer[k] == producer) { f->bytes[k] += bytes; return; }
      if (f->n < FRAME_PRODUCERS) {
         f->producer[f->n] = producer;
         f->bytes[f->n++] = bytes;
         return;
      }
   }
   *xfer_slot(((ULong)consumer << 32) | producer) += bytes;
}

/* ------------------------------------------------------------------ shadow memory */

/* The last writer and last reader of each byte, in chunks of 64 KiB found by a hash of
   the address's upper bits (a one-entry cache catches repeated nearby accesses). */
#define CHUNK_BITS 16
#define CHUNK_SIZE (1UL << CHUNK_BITS)

typedef struct { Addr base; UInt *writer; } Chunk;    /* readers follow writers */

static Chunk *chunks = NULL;
static UWord ch_cap = 0, ch_used = 0;
static Addr last_base = 1;             /* never a chunk base */
static UInt *last_writer = NULL;

static UInt *chunk_of(Addr a, Bool create)
{
   Addr base = a & ~(CHUNK_SIZE - 1);
   UWord i, mask;
   if (base == last_base) return last_writer;
   if (create && 2 * (ch_used + 1) > ch_cap) {
      Chunk *old = chunks;
      UWord n = ch_cap, j;
      ch_cap = ch_cap ? 2 * ch_cap : 1024;
      chunks = VG_(calloc)("xf.chunks", ch_cap, sizeof(Chunk));
      for (j = 0; j < n; j++)
         if (old[j].writer) {
            mask = ch_cap - 1;
            i = (UWord)((old[j].base >> CHUNK_BITS) * 0x9E3779B97F4A7C15ULL >> 24) & mask;
            while (chunks[i].writer) i = (i + 1) & mask;
            chunks[i] = old[j];
         }
      if (old) VG_(free)(old);
   }
   if (ch_cap == 0) return NULL;
   mask = ch_cap - 1;
   i = (UWord)((base >> CHUNK_BITS) * 0x9E3779B97F4A7C15ULL >> 24) & mask;
   while (chunks[i].writer && chunks[i].base != base) i = (i + 1) & mask;
   if (!chunks[i].writer) {
      if (!create) return NULL;
      chunks[i].base = base;
      chunks[i].writer = VG_(calloc)("xf.chunk", 2 * CHUNK_SIZE, sizeof(UInt));
      ch_used++;
   }
   last_base = base;
   last_writer = chunks[i].writer;
   return last_writer;
}

static void mem_write(Addr a, SizeT size, UInt writer)
{
   while (size) {
      SizeT off = a & (CHUNK_SIZE - 1), n = CHUNK_SIZE - off, k;
      UInt *w;
      if (n > size) n = size;
      w = chunk_of(a, writer != 0);
      if (w)
         for (k = 0; k < n; k++) {
            w[off + k] = writer;
            w[CHUNK_SIZE + off + k] = 0;
         }
      a += n;
      size -= n;
   }
}

static void mem_read(Addr a, SizeT size, UInt reader)
{
   UInt run_writer = 0;
   ULong run = 0;
   if (!reader) return;
   while (size) {
      SizeT off = a & (CHUNK_SIZE - 1), n = CHUNK_SIZE - off, k;
      UInt *w;
      if (n > size) n = size;
      w = chunk_of(a, False);
      for (k = 0; k < n; k++) {
         UInt p = 0;
         if (w) {
            if (w[CHUNK_SIZE + off + k] == reader) continue;     /* already learned */
            w[CHUNK_SIZE + off + k] = reader;
            p = w[off + k];
         }
         if (p != run_writer) {
            if (run_writer) add_xfer(reader, run_writer, run);
            run_writer = p;
            run = 0;
         }
         run++;
      }
      a += n;
      size -= n;
   }
   if (run_writer) add_xfer(reader, run_writer, run);
}

/* Memory that appears or disappears has no writer; clear only chunks that exist. */
static void mem_forget(Addr a, SizeT size)
{
   Addr end = a + size, base;
   if (size / CHUNK_SIZE > ch_used) {
      UWord j;
      for (j = 0; j < ch_cap; j++) {
         Addr lo, hi;
         if (!chunks[j].writer) continue;
         lo = chunks[j].base > a ? chunks[j].base : a;
         hi = chunks[j].base + CHUNK_SIZE < end ? chunks[j].base + CHUNK_SIZE : end;
         if (lo < hi) {
            VG_(memset)(chunks[j].writer + (lo - chunks[j].base), 0, (hi - lo) * sizeof(UInt));
            VG_(memset)(chunks[j].writer + CHUNK_SIZE + (lo - chunks[j].base), 0,
                        (hi - lo) * sizeof(UInt));
         }
      }
      return;
   }
   for (base = a; base < end; ) {
      SizeT off = base & (CHUNK_SIZE - 1), n = CHUNK_SIZE - off;
      UInt *w = chunk_of(base, False);
      if (n > end - base) n = end - base;
      if (w) {
         VG_(memset)(w + off, 0, n * sizeof(UInt));
         VG_(memset)(w + CHUNK_SIZE + off, 0, n * sizeof(UInt));
      }
      base += n;
   }
}

static VG_REGPARM(2) void on_load(Addr a, UWord size)  { mem_read(a, size, cur); }
static VG_REGPARM(2) void on_store(Addr a, UWord size) { mem_write(a, size, cur); }

static void xf_syscall_read(CorePart part, ThreadId tid, const HChar *s, Addr a, SizeT n)
{
   if (part == Vg_CoreSysCall) mem_read(a, n, cur);
}

static void xf_syscall_write(CorePart part, ThreadId tid, Addr a, SizeT n)
{
   if (part == Vg_CoreSysCall) mem_write(a, n, cur);
}

static void xf_new_mmap(Addr a, SizeT n, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
   mem_forget(a, n);
}

static void xf_die_mem(Addr a, SizeT n) { mem_forget(a, n); }

/* ------------------------------------------------------------------ instrumentation */

static Bool arith_op(IROp op)
{
   return (op >= Iop_Add8 && op <= Iop_ModS128)           /* integer, incl. Cmp, Not */
       || (op >= Iop_Not1 && op <= Iop_Or1)
       || (op >= Iop_AddF64 && op <= Iop_CmpF16)          /* scalar floating point */
       || (op >= Iop_MAddF32 && op <= Iop_MSubF64r32)     /* fused multiply-add (FMA) */
       || (op >= Iop_Add32Fx4 && op <= Iop_RSqrtStep32Fx4) /* SSE floating point, */
       || (op >= Iop_Add32F0x4 && op <= Iop_RSqrtStep64Fx2) /* not its conversions */
       || (op >= Iop_Add64F0x2 && op <= Iop_Sqrt64F0x2)
       || (op >= Iop_NotV128 && op <= Iop_Sar64x2)        /* SSE integer and logic */
       || (op >= Iop_AndV256 && op <= Iop_Avg16Ux16)      /* AVX integer and logic */
       || (op >= Iop_Add64Fx4 && op <= Iop_Div32Fx8)      /* AVX floating point */
       || (op >= Iop_Sqrt32Fx8 && op <= Iop_Min64Fx4);
}

static Int sp_offset, ip_offset;

/* Per instruction (IMark) of the superblock: is it arithmetic/logic?  Tmps remember
   the index of the instruction whose arithmetic operation computed them (-1: none), so
   a value computed by an earlier instruction does not make a later one arithmetic.
   The rounding mode an instruction reads (an And of the SSE or x87 control state) is
   ROUNDING: operations on it alone compute no data, so that a conversion such as
   cvtsi2sd, which rounds by the current mode, stays a conversion. */
#define ROUNDING (-2)
static Bool *classify(IRSB *sb, Int *n_instr)
{
   Int *made = VG_(malloc)("xf.made", (sb->tyenv->types_used + 1) * sizeof(Int));
   Bool *arith = VG_(calloc)("xf.arith", sb->stmts_used + 1, sizeof(Bool));
   Int i, k = -1, t;
   for (t = 0; t < sb->tyenv->types_used; t++) made[t] = -1;

#define FROM(e) ((e)->tag == Iex_RdTmp ? made[(e)->Iex.RdTmp.tmp] : -1)
#define MINE(e) ((e) != NULL && k >= 0 && FROM(e) == k)
#define CONTROL(e) ((e)->tag == Iex_Const || FROM(e) == ROUNDING)
   for (i = 0; i < sb->stmts_used; i++) {
      IRStmt *st = sb->stmts[i];
      switch (st->tag) {
      case Ist_IMark:
         k++;
         break;
      case Ist_WrTmp: {
         IRExpr *e = st->Ist.WrTmp.data;
         Int m = -1, j;
         switch (e->tag) {
         case Iex_Get:
            m = (e->Iex.Get.offset == __builtin_offsetof(VexGuestAMD64State, guest_SSEROUND)
                 || e->Iex.Get.offset == __builtin_offsetof(VexGuestAMD64State,
                                                            guest_FPROUND)) ? ROUNDING : -1;
            break;
         case Iex_Unop:
            m = FROM(e->Iex.Unop.arg) == ROUNDING ? ROUNDING
              : arith_op(e->Iex.Unop.op) ? k : FROM(e->Iex.Unop.arg);
            break;
         case Iex_Binop: {
            IRExpr *a = e->Iex.Binop.arg1, *b = e->Iex.Binop.arg2;
            m = (FROM(a) == ROUNDING || FROM(b) == ROUNDING) && CONTROL(a) && CONTROL(b)
                   ? ROUNDING
              : arith_op(e->Iex.Binop.op) ? k
              : (FROM(a) == k || FROM(b) == k) ? k : -1;
            break;
         }
         case Iex_Triop:
            m = arith_op(e->Iex.Triop.details->op) ? k
              : (FROM(e->Iex.Triop.details->arg2) == k
                 || FROM(e->Iex.Triop.details->arg3) == k) ? k : -1;
            break;
         case Iex_Qop:
            m = arith_op(e->Iex.Qop.details->op) ? k : -1;
            break;
         case Iex_ITE:
            m = (FROM(e->Iex.ITE.iftrue) == k || FROM(e->Iex.ITE.iffalse) == k) ? k : -1;
            break;
         case Iex_CCall:
            for (j = 0; e->Iex.CCall.args[j]; j++)
               if (FROM(e->Iex.CCall.args[j]) == k) m = k;
            break;
         case Iex_RdTmp: m = FROM(e); break;
         default: m = -1;              /* Load, Const: no arithmetic of its own */
         }
         made[st->Ist.WrTmp.tmp] = m;
         break;
      }
      case Ist_Put: {
         Int off = st->Ist.Put.offset;
         if (off == __builtin_offsetof(VexGuestAMD64State, guest_CC_OP) && k >= 0)
            arith[k] = True;
         else if (off != sp_offset && off != ip_offset && MINE(st->Ist.Put.data))
            arith[k] = True;
         break;
      }
      case Ist_PutI:
         if (MINE(st->Ist.PutI.details->data)) arith[k] = True;
         break;
      case Ist_Store:
         if (MINE(st->Ist.Store.data)) arith[k] = True;
         break;
      case Ist_StoreG:
         if (MINE(st->Ist.StoreG.details->data)) arith[k] = True;
         break;
      case Ist_LoadG:
         made[st->Ist.LoadG.details->dst] = -1;
         break;
      case Ist_CAS:
         made[st->Ist.CAS.details->oldLo] = -1;
         if (st->Ist.CAS.details->oldHi != IRTemp_INVALID)
            made[st->Ist.CAS.details->oldHi] = -1;
         break;
      case Ist_LLSC:
         made[st->Ist.LLSC.result] = -1;
         break;
      case Ist_Dirty:
         if (st->Ist.Dirty.details->tmp != IRTemp_INVALID)
            made[st->Ist.Dirty.details->tmp] = -1;
         break;
      default:
         break;
      }
   }
#undef FROM
#undef MINE
#undef CONTROL
   VG_(free)(made);
   *n_instr = k + 1;
   return arith;
}

static void call(IRSB *out, const HChar *name, void *fn, Int regparms, IRExpr **args,
                 IRExpr *guard)
{
   IRDirty *d = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(fn), args);
   if (guard) d->guard = guard;
   addStmtToIRSB(out, IRStmt_Dirty(d));
}

/* The stack pointer at this point of the superblock: the value last put in the
   superblock, else the guest state's, which is exact at the start of a superblock.
   (Without chasing, an entry inside a superblock is reached only by falling through
   into it.) */
static IRExpr *stack_pointer(IRSB *out, IRType word, IRExpr *last_put)
{
   IRTemp t;
   if (last_put) return last_put;
   t = newIRTemp(out->tyenv, word);
   addStmtToIRSB(out, IRStmt_WrTmp(t, IRExpr_Get(sp_offset, word)));
   return IRExpr_RdTmp(t);
}

static void flush(IRSB *out, UWord *arith, UWord *other)
{
   if (*arith + *other == 0) return;
   call(out, "on_count", on_count, 2,
        mkIRExprVec_2(mkIRExpr_HWord(*arith), mkIRExpr_HWord(*other)), NULL);
   *arith = *other = 0;
}

static void access(IRSB *out, void *fn, const HChar *name, IRExpr *addr, Int size,
                   IRExpr *guard)
{
   call(out, name, fn, 2, mkIRExprVec_2(addr, mkIRExpr_HWord(size)), guard);
}

static IRSB *xf_instrument(VgCallbackClosure *closure, IRSB *in,
                           const VexGuestLayout *layout, const VexGuestExtents *vge,
                           const VexArchInfo *archinfo_host, IRType gWordTy, IRType hWordTy)
{
   IRSB *out = deepCopyIRSBExceptStmts(in);
   DiEpoch ep = VG_(current_DiEpoch)();
   Int i, k = -1, n_instr;
   Bool *arith;
   UWord pend_arith = 0, pend_other = 0;
   Bool first = True;
   IRExpr *sp = NULL;                  /* the atom last put to the stack pointer */

   sp_offset = layout->offset_SP;
   ip_offset = layout->offset_IP;
   arith = classify(in, &n_instr);

   for (i = 0; i < in->stmts_used; i++) {
      IRStmt *st = in->stmts[i];
      if (!st || st->tag == Ist_NoOp) continue;
      switch (st->tag) {
      case Ist_IMark: {
         const HChar *name;
         k++;
         if (VG_(get_fnname_if_entry)(ep, st->Ist.IMark.addr, &name)) {
            flush(out, &pend_arith, &pend_other);
            call(out, "on_entry", on_entry, 2,
                 mkIRExprVec_2(mkIRExpr_HWord(intern_fn(name)),
                               stack_pointer(out, gWordTy, sp)),
                 NULL);
         } else if (first) {
            call(out, "on_block", on_block, 1, mkIRExprVec_1(stack_pointer(out, gWordTy, sp)),
                 NULL);
         }
         first = False;
         if (arith[k]) pend_arith++; else pend_other++;
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_WrTmp: {
         IRExpr *e = st->Ist.WrTmp.data;
         if (e->tag == Iex_Load)
            access(out, on_load, "on_load", e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty),
                   NULL);
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_Store:
         access(out, on_store, "on_store", st->Ist.Store.addr,
                sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Store.data)), NULL);
         addStmtToIRSB(out, st);
         break;
      case Ist_StoreG: {
         IRStoreG *sg = st->Ist.StoreG.details;
         access(out, on_store, "on_store", sg->addr,
                sizeofIRType(typeOfIRExpr(in->tyenv, sg->data)), sg->guard);
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_LoadG: {
         IRLoadG *lg = st->Ist.LoadG.details;
         IRType ty = Ity_INVALID, wide = Ity_INVALID;
         typeOfIRLoadGOp(lg->cvt, &wide, &ty);
         access(out, on_load, "on_load", lg->addr, sizeofIRType(ty), lg->guard);
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_CAS: {
         IRCAS *cas = st->Ist.CAS.details;
         Int size = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo));
         if (cas->dataHi) size *= 2;
         access(out, on_load, "on_load", cas->addr, size, NULL);
         access(out, on_store, "on_store", cas->addr, size, NULL);
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_LLSC: {
         if (st->Ist.LLSC.storedata == NULL)
            access(out, on_load, "on_load", st->Ist.LLSC.addr,
                   sizeofIRType(typeOfIRTemp(in->tyenv, st->Ist.LLSC.result)), NULL);
         else
            access(out, on_store, "on_store", st->Ist.LLSC.addr,
                   sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.LLSC.storedata)), NULL);
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_Dirty: {
         IRDirty *d = st->Ist.Dirty.details;
         if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
            access(out, on_load, "on_load", d->mAddr, d->mSize, NULL);
         if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
            access(out, on_store, "on_store", d->mAddr, d->mSize, NULL);
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_Put:
         if (st->Ist.Put.offset == sp_offset
             && typeOfIRExpr(in->tyenv, st->Ist.Put.data) == gWordTy)
            sp = st->Ist.Put.data;
         addStmtToIRSB(out, st);
         break;
      case Ist_Exit:
         flush(out, &pend_arith, &pend_other);
         addStmtToIRSB(out, st);
         break;
      default:
         addStmtToIRSB(out, st);
      }
   }
   flush(out, &pend_arith, &pend_other);
   VG_(free)(arith);
   return out;
}

/* A name is one field of the log: whitespace and '#' become '_'. */
static void out_name(const HChar *name)
{
   HChar piece[2] = {0, 0};
   for (; *name; name++) {
      piece[0] = (*name == ' ' || *name == '\t' || *name == '#' || *name == '\n') ? '_' : *name;
      out_line(&log_out, piece);
   }
}

static void xf_fini(Int exitcode)
{
   HChar line[128];
   UInt id, run_parent = 0;
   UWord j;
   Int t;

   for (t = 0; t < MAX_THREADS; t++) {          /* invocations that never returned */
      stack = &stacks[t];
      while (stack->depth) pop();
   }
   for (j = 0; j < xf_cap; j++)
      if (xf_keys[j]) write_xfer(xf_keys[j] >> 32, xf_keys[j] & 0xFFFFFFFFULL, xf_bytes[j]);
   out_close(&xfers_out);

   out_open(&log_out, "function");
   out_line(&log_out, "# ID NAME: invocations in call order (mapeval profile)\n");
   for (id = 1; id < inv_count; id++) {
      VG_(sprintf)(line, "%u ", id);
      out_line(&log_out, line);
      out_name(fn_names[invs[id].fn]);
      out_line(&log_out, "\n");
   }
   out_close(&log_out);

   out_open(&log_out, "subcalls");
   out_line(&log_out, "# ID: CHILD CHILD ...\n");
   for (id = 1; id < inv_count; id++) {
      UInt p = invs[id].parent;
      if (!p) continue;
      if (p != run_parent) {
         VG_(sprintf)(line, "%s%u:", run_parent ? "\n" : "", p);
         out_line(&log_out, line);
         run_parent = p;
      }
      VG_(sprintf)(line, " %u", id);
      out_line(&log_out, line);
   }
   if (run_parent) out_line(&log_out, "\n");
   out_close(&log_out);

   out_open(&log_out, "icount");
   out_line(&log_out, "# ID ARITHMETIC_LOGIC OTHER: instructions of the invocation itself\n");
   for (id = 1; id < inv_count; id++) {
      VG_(sprintf)(line, "%u %llu %llu\n", id, invs[id].arith, invs[id].other);
      out_line(&log_out, line);
   }
   out_close(&log_out);
}

/* ------------------------------------------------------------------ set-up */

static void xf_post_clo_init(void)
{
   if (clo_outdir == NULL) {
      VG_(fmsg_bad_option)("--outdir", "mapeval_xfer needs --outdir=DIR\n");
   }
   root_fn = intern_fn(clo_root);
   out_open(&xfers_out, "xfers");
   out_line(&xfers_out, "# CONSUMER PRODUCER BYTES (written as each consumer returns)\n");
   /* One superblock per jump target: a call or jump then starts a superblock, where the
      guest state (the stack pointer read on entry) is exact. */
   VG_(clo_vex_control).guest_chase = False;
   /* Each instruction classified on its own IR, unoptimised (see Instructions above). */
   VG_(clo_vex_control).iropt_level = 0;
}

static void xf_pre_clo_init(void)
{
   VG_(details_name)("mapeval_xfer");
   VG_(details_version)(NULL);
   VG_(details_description)("function-level transfers and instruction counts for mapeval");
   VG_(details_copyright_author)("mapeval");
   VG_(details_bug_reports_to)("the mapeval project");
   VG_(details_avg_translation_sizeB)(400);

   VG_(basic_tool_funcs)(xf_post_clo_init, xf_instrument, xf_fini);
   VG_(needs_command_line_options)(xf_process_cmd_line_option, xf_print_usage,
                                   xf_print_debug_usage);
   VG_(track_start_client_code)(xf_start_client_code);
   VG_(track_pre_mem_read)(xf_syscall_read);
   VG_(track_post_mem_write)(xf_syscall_write);
   VG_(track_new_mem_mmap)(xf_new_mmap);
   VG_(track_die_mem_munmap)(xf_die_mem);
   VG_(track_die_mem_brk)(xf_die_mem);
}

VG_DETERMINE_INTERFACE_VERSION(xf_pre_clo_init)
