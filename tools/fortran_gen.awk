# Generates the Fortran binding's translations from courier's mpi.h, at build
# time (src/fortran/CMakeLists.txt runs it; its output is build output, never
# committed), so that every MPI call mpi.h declares gets its Fortran form and
# a constant changed in mpi.h changes in mpif.h too. POSIX awk (Debian's mawk).
#   awk -v mode=wrappers -f fortran_gen.awk mpi.h > mpi_fwrap.c
#       the mpif.h / `use mpi` entry points: mpi_send_ and pmpi_send_ (gfortran's
#       names) for MPI_Send, every argument by reference, ierror last, the
#       hidden lengths of CHARACTER arguments after it (size_t, gfortran >= 8);
#       choice buffers pass through cr_fbuf (MPI_BOTTOM, MPI_IN_PLACE), statuses
#       are copied between the Fortran INTEGER(MPI_STATUS_SIZE) and C's
#       MPI_Status, strings lose their leading and trailing blanks (in) or
#       are blank-padded (out: only what the call gave), Waitany's
#       and Waitsome's indices count from 1. The calls are the C ones: their
#       argument checks and error handlers apply unchanged.
#   awk -v mode=usempi -f fortran_gen.awk mpi.h > mpi_usempi_interfaces.h
#       `use mpi`'s explicit interfaces to the same entry points (a program
#       may rename one out of the module and define its own, for profiling),
#       choice buffers without type, kind or rank checks (gfortran's
#       NO_ARG_CHECK, as Open MPI's module has them); a call with an argument
#       of another kind (a procedure, an untyped pointer) keeps none.
#   awk -v mode=consts -f fortran_gen.awk mpi.h > mpi_fconst.c
#       a C program that prints mpif.h's constants (INTEGER, PARAMETER), their
#       values taken from mpi.h by the C compiler itself, then the file its
#       first argument names; with a second argument f08, mpi_f08's constants
#       instead (the handles typed: TYPE(MPI_Comm), PARAMETER :: ...).
#   awk -v mode=f08c -f fortran_gen.awk mpi.h > mpi_f08_wrap.c
#   awk -v mode=f08mod -f fortran_gen.awk mpi.h > mpi_f08_interfaces.h
#       mpi_f08's routines: BIND(C) interfaces (f08mod) to C functions
#       courier_f08_<name> (f08c) that take choice buffers as TS 29113
#       descriptors, TYPE(MPI_Status) as C's layout, and an OPTIONAL ierror;
#       routines with procedure or untyped pointer arguments are left out.
#   awk -v mode=f08proc -f fortran_gen.awk mpi.h > mpi_f08_procs.h
#       mpi_f08's routines with strings: module procedures that call the
#       mpif.h entry points with the strings' lengths.
# Calls left to hand-written code (src/fortran/mpi_fspecial.c,
# mpi_f08_special.c, mpi_f08.f90) or not offered in Fortran are listed in
# `special` (every form) and `f08hand` (mpi_f08) below. A declaration the
# script cannot translate (an argument of a kind it does not know: a call
# added to mpi.h later, say) is left out, never a failed build: each mode
# names what it left out on standard error, one line, at build time.

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }

BEGIN {
    special = "^(Init|Init_thread|Pcontrol|[A-Za-z]+_c2f|[A-Za-z]+_f2c|Status_c2f08|Status_f082c|" \
              "Status_f2f08|Status_f082f|Comm_get_attr|Comm_set_attr|Win_get_attr|Win_set_attr|" \
              "Type_get_attr|Type_set_attr|Attr_get|Attr_put|Comm_create_keyval|" \
              "Win_create_keyval|Type_create_keyval|Keyval_create|Grequest_start|" \
              "Info_create_env|Info_get_string|Comm_spawn|Comm_spawn_multiple|" \
              "[A-Za-z]+_toint|[A-Za-z]+_fromint|Abi_set_fortran_info|Abi_[gs]et_fortran_booleans)$"
    f08hand = "^(Op_create|Comm_create_errhandler|Win_create_errhandler|File_create_errhandler|" \
              "Session_create_errhandler|Pack_external|Unpack_external)$"
    nskip = 0
    # The profiling entry points (pmpi_send_) exist for the calls whose
    # PMPI_ form mpi.h declares: a call declared without one gets only its
    # MPI_ entry point (a first pass over the file).
    while ((getline pline < ARGV[1]) > 0)
        if (match(pline, /^(int|double|MPI_Aint) PMPI_[A-Za-z0-9_]+\(/)) {
            pname = substr(pline, RSTART, RLENGTH - 1); sub(/^[A-Za-z_]+ PMPI_/, "", pname)
            pmpi[pname] = 1
        }
    close(ARGV[1])
    # The nonblocking calls whose (buffer, count, datatype) describe the whole
    # buffer: a non-contiguous section goes to them as a derived datatype.
    nbsect = "^(Isend|Ibsend|Issend|Irsend|Irecv|Imrecv|Send_init|Bsend_init|Ssend_init|" \
             "Rsend_init|Recv_init|Isendrecv|Isendrecv_replace|Ibcast|Bcast_init|Put|Get|Rput|Rget|" \
             "File_i(read|write)(_at)?(_all)?|File_i(read|write)_shared)$"
    # The nonblocking and persistent collectives: the buffers (buffer, count,
    # datatype) describe whole (gathers' send buffer, scatters' receive
    # buffer), those made of per-rank blocks of (count, datatype) each
    # (cr_f08buf_nbblk), and the reductions' two buffers, which share one
    # (count, datatype) (cr_f08buf_nb2).
    nbgath = "^(Igather|Igatherv|Iallgather|Iallgatherv|Ineighbor_allgather|Ineighbor_allgatherv|" \
             "Gather_init|Gatherv_init|Allgather_init|Allgatherv_init|Neighbor_allgather_init|" \
             "Neighbor_allgatherv_init)$"
    nbscat = "^(Iscatter|Iscatterv|Scatter_init|Scatterv_init)$"
    nbgathblk = "^(Igather|Iallgather|Ineighbor_allgather|Gather_init|Allgather_init|" \
                "Neighbor_allgather_init)$"
    nbscatblk = "^(Iscatter|Scatter_init)$"
    nba2a = "^(Ialltoall|Ineighbor_alltoall|Alltoall_init|Neighbor_alltoall_init)$"
    nbred = "^(Ireduce|Iallreduce|Iscan|Iexscan|Reduce_init|Allreduce_init|Scan_init|Exscan_init)$"
    choice = "^(buf|sendbuf|recvbuf|buffer|origin_addr|result_addr|compare_addr|inbuf|outbuf|" \
             "location|base|inoutbuf)$"
    collecting = 0
    nconst = 0
    handles = "^(MPI_Comm|MPI_Datatype|MPI_Group|MPI_Op|MPI_Request|MPI_Errhandler|MPI_Info|" \
              "MPI_Win|MPI_Message|MPI_File|MPI_Session)$"
    logicals = "^(flag|reorder|commute|high|periods|remain_dims|weighted)$"
    if (mode == "f08c") {
        print "/* Generated by tools/fortran_gen.awk from mpi.h: do not edit. */"
        print "#include \"fortran08.h\""
        print ""
    }
    if (mode == "f08mod") {
        print "! Generated by tools/fortran_gen.awk from mpi.h: do not edit."
        print "  interface"
    }
    if (mode == "usempi") {
        print "! Generated by tools/fortran_gen.awk from mpi.h: do not edit."
        print "  interface"
    }
    if (mode == "wrappers") {
        print "/* Generated by tools/fortran_gen.awk from mpi.h: do not edit. */"
        print "#include \"fortran.h\""
        print ""
    }
}

# What a C program must opt into (#ifdef OMPI_ENABLE_MPI1_COMPAT: the MPI-1
# calls and constants MPI-3.0 removed): its constants (MPI_LB, MPI_UB) go into
# mpif.h and mpi_f08 (TYPE(MPI_Datatype), as Open MPI's module has them:
# MPICH's allctypesf08 asks their names), its calls are hand-written for
# mpif.h (src/fortran/mpi_flegacy.c: default INTEGERs where C has MPI_Aint);
# mpi_f08 has none of the calls.
/^#ifdef OMPI_ENABLE_MPI1_COMPAT/ { optin = 1; next }
optin && /^#endif/ { optin = 0; next }
optin && mode != "consts" { next }
# The large-count _c forms (their block in mpi.h): in mpi_f08 only, as the
# INTEGER(MPI_COUNT_KIND) specifics of the generic name (MPI_Send_c under
# MPI_Send), where their Fortran types differ from the plain form's.
/^\/\* ---- large counts / { largec = 1; next }
largec && /^\/\* ---- end of large counts/ { largec = 0; next }
largec && mode !~ /^(f08c|f08mod)$/ { next }

mode ~ /^(wrappers|usempi|f08c|f08mod|f08proc)$/ && /^(int|double|MPI_Aint) MPI_[A-Z][a-z]/ {
    collecting = 1; decl = ""
}
mode ~ /^(wrappers|usempi|f08c|f08mod|f08proc)$/ && collecting {
    decl = decl " " $0
    if (index($0, ";")) {
        collecting = 0
        if (mode == "wrappers") wrapper(decl)
        else if (mode == "usempi") usempi(decl)
        else f08(decl)
    }
}

# ---- constants ---------------------------------------------------------------
mode == "consts" && /^#define MPI_[A-Z0-9_]+[ \t]/ && $2 !~ /^MPI_F_/ { # MPI_F_*: C's view of Fortran
    name = $2
    val = $0
    sub(/^#define[ \t]+[A-Z0-9_]+[ \t]+/, "", val)
    sub(/[ \t]*\/\*.*$/, "", val)
    val = trim(val)
    if (val ~ /^\(\(MPI_[A-Za-z]+\)-?(0x)?[0-9a-fA-F]+\)$/ || val ~ /^\(?-?[0-9]+(LL)?\)?$/ || val ~ /^0x[0-9a-fA-F]+$/ ||
        val ~ /^MPI_[A-Z0-9_]+$/) {
        consts[++nconst] = name
        ckind[name] = ""
        if (val ~ /LL\)?$/) { ckind[name] = "8"; next } # a 64-bit one: INTEGER*8
        if (val ~ /^\(\(MPI_[A-Za-z]+\)/) { k = val; sub(/^\(\(/, "", k); sub(/\).*/, "", k); ckind[name] = k }
        else if (val in ckind) ckind[name] = ckind[val]
        if (ckind[name] !~ handles && ckind[name] != "8") ckind[name] = ""
    }
}
mode == "consts" && /MPI_[A-Z0-9_]+ = / {
    line = $0
    while (match(line, /MPI_[A-Z0-9_]+ = /)) {
        consts[++nconst] = substr(line, RSTART, RLENGTH - 3)
        ckind[consts[nconst]] = ""
        line = substr(line, RSTART + RLENGTH)
    }
}

# The types of a routine's arguments in order (its declarations fdecl),
# the kinds of MPI_ADDRESS_KIND, MPI_COUNT_KIND, MPI_OFFSET_KIND as one.
function sigof(fd,    n, L, i, t, s) {
    n = split(fd, L, "\n"); s = ""
    for (i = 1; i <= n; i++) {
        if (L[i] == "") continue
        t = L[i]; sub(/ ::.*/, "", t)
        gsub(/, *(intent\([a-z]+\)|asynchronous|value)/, "", t)
        gsub(/MPI_(ADDRESS|COUNT|OFFSET)_KIND/, "8", t)
        s = s trim(t) (L[i] ~ /\)$/ && L[i] !~ /\(\.\.\)/ ? "[]" : "") "|"
    }
    return s
}

function skip(fname, why) {
    if (fname ~ special || (mode != "wrappers" && fname ~ f08hand)) return
    skipped = skipped (nskip++ ? ", " : "") "MPI_" fname " (" why ")"
}

END {
    if (nskip)
        print "fortran_gen.awk (" mode "): not in Fortran: " skipped > "/dev/stderr"
    if (mode == "f08mod" || mode == "usempi") print "  end interface"
    if (mode == "consts") {
        print "/* Generated by tools/fortran_gen.awk from mpi.h: do not edit. Prints"
        print " * mpif.h: its INTEGER constants, each with its value in mpi.h, then the"
        print " * file named by its argument (src/fortran/mpif_tail.h). */"
        print "#include <stdio.h>"
        print "#include <string.h>"
        print "#define OMPI_ENABLE_MPI1_COMPAT 1 /* MPI_LB, MPI_UB: mpif.h has them */"
        print "#include \"mpi.h\""
        print "const int courier_mpi_h_needs_libcourier; /* a build tool: no libcourier to link */"
        print "static int f08; /* argv[2] is f08: the module's form, handles typed */"
        print "static void p(const char *n, const char *kind, long long v)"
        print "{"
        print "    if (!f08)"
        print "        printf(\"      INTEGER%s %s\\n      PARAMETER (%s=%lld)\\n\", *kind == '8' ? \"*8\" : \"\", n, n, v);"
        print "    else if (*kind == '8')"
        print "        printf(\"  integer(8), parameter :: %s = %lld\\n\", n, v);"
        print "    else if (*kind)"
        print "        printf(\"  type(%s), parameter :: %s = %s(%lld)\\n\", kind, n, kind, v);"
        print "    else"
        print "        printf(\"  integer, parameter :: %s = %lld\\n\", n, v);"
        print "}"
        print "int main(int argc, char **argv)"
        print "{"
        print "    f08 = argc > 2 && strcmp(argv[2], \"f08\") == 0;"
        print "    if (f08) {"
        print "        printf(\"! mpi_f08's constants, generated from mpi.h by tools/fortran_gen.awk\\n\");"
        print "    }"
        print "    if (!f08) printf(\"!     mpif.h: courier's MPI for Fortran (docs/fortran.md), generated\\n\");"
        print "    if (!f08) printf(\"!     from mpi.h by tools/fortran_gen.awk; fixed or free form.\\n\");"
        for (i = 1; i <= nconst; i++)
            if (!(consts[i] in seen)) {
                seen[consts[i]] = 1
                printf "    p(\"%s\", \"%s\", (long long)(%s));\n", consts[i], ckind[consts[i]], consts[i]
            }
        print "    if (f08) return 0;"
        print "    FILE *tail = argc > 1 ? fopen(argv[1], \"r\") : NULL; /* mpif_tail.h */"
        print "    if (!tail) return 1;"
        print "    int ch;"
        print "    while ((ch = getc(tail)) != EOF) putchar(ch);"
        print "    fclose(tail);"
        print "    return 0;"
        print "}"
    }
}

# ---- one wrapper -------------------------------------------------------------
function wrapper(d,    ret, fname, args, n, a, i, t, nm, br, cls, params, pre, call, post, lens,
                 countarg, body, lname, sep, tt) {
    gsub(/[ \t]+/, " ", d)
    d = trim(d)
    ret = d; sub(/ .*/, "", ret)
    fname = d; sub(/^[A-Za-z_]+ MPI_/, "", fname); sub(/\(.*/, "", fname)
    if (fname ~ special) return
    args = d; sub(/^[^(]*\(/, "", args); sub(/\)[^)]*;$/, "", args)
    if (args ~ /\*\*\*|\*[a-z_]+\[\]/) return # char ***argv, char *argv[]: not in Fortran
    if (args ~ /char \*\*/) { skip(fname, "char **"); return }
    n = (args == "void") ? 0 : split(args, a, ",")
    params = ""; pre = ""; call = ""; post = ""; lens = ""; countarg = ""; freed = ""
    for (i = 1; i <= n; i++) {
        a[i] = trim(a[i])
        if (match(a[i], /[A-Za-z_][A-Za-z0-9_]*$/) || match(a[i], /[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])+$/)) {
            t = trim(substr(a[i], 1, RSTART - 1)); nm = substr(a[i], RSTART); br = ""
            if (index(nm, "[")) { br = substr(nm, index(nm, "[")); nm = substr(nm, 1, index(nm, "[") - 1) }
        } else {
            skip(fname, "argument " i)
            return # "..." and the like: hand-written
        }
        if (nm == "count" || nm == "incount") countarg = nm
        sep = (params == "") ? "" : ", "
        csep = (call == "") ? "" : ", "
        if (t ~ /char/) {
            if (t ~ /const/) {
                params = params sep "const char *" nm
                pre = pre "    char *" nm "_c = cr_fstr_in(" nm ", " nm "_len);\n" \
                      "    if (!" nm "_c) {" freed " *ierr = MPI_ERR_NO_MEM; return; }\n"
                freed = freed " free(" nm "_c);"
                call = call csep nm "_c"
                post = post "    free(" nm "_c);\n"
            } else {
                params = params sep "char *" nm
                pre = pre "    char " nm "_c[CR_FSTR_MAX + 1] = \"\";\n"
                call = call csep nm "_c"
                # written only when the call gave one (MPI_INFO_GET with
                # flag false leaves the program's string as it was; a call
                # that failed may still have written one: MPI_ERROR_STRING of
                # an unknown code says so)
                post = post "    if ((rc == MPI_SUCCESS" (args ~ /int \*flag/ ? " && *flag" : "") ") || " nm "_c[0])\n" \
                       "        cr_fstr_out(" nm ", " nm "_len, " nm "_c);\n"
            }
            lens = lens ", size_t " nm "_len"
        } else if (t ~ /MPI_Status/) {
            params = params sep "MPI_Fint *" nm
            if (br != "") {
                pre = pre "    MPI_Status *" nm "_p = cr_fstatuses_in(" nm ", *" countarg ");\n" \
                      "    if (" nm "_p == CR_FNOMEM) { *ierr = MPI_ERR_NO_MEM; return; }\n"
                post = post "    cr_fstatuses_out(" nm ", " nm "_p, *" countarg ");\n"
            } else {
                pre = pre "    MPI_Status " nm "_c;\n    MPI_Status *" nm "_p = cr_fstatus_in(" nm ", &" nm "_c);\n"
                if (t !~ /const/) post = post "    cr_fstatus_out(" nm ", " nm "_p);\n"
            }
            call = call csep nm "_p"
        } else if (t ~ /void \*$/ && nm ~ choice) {
            params = params sep t nm
            call = call csep "cr_fbuf(" nm ")"
        } else if (t ~ /\*$/ || br != "") {
            params = params sep t (t ~ /\*$/ ? "" : " ") nm br
            if (nm ~ /weights$/ && t ~ /const/) call = call csep "cr_fweights(" nm ")"
            else call = call csep nm
        } else {
            tt = t; sub(/^const /, "", tt)
            params = params sep tt " *" nm
            call = call csep ((nm in subst) ? subst[nm] : "*" nm)
        }
    }
    if (fname ~ /^(Waitany|Testany|Request_get_status_any)$/)
        post = post "    if (rc == MPI_SUCCESS && *index >= 0) ++*index; /* Fortran counts from 1 */\n"
    if (fname ~ /^(Waitsome|Testsome|Request_get_status_some)$/)
        post = post "    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED)\n" \
                    "        for (int i = 0; i < *outcount && i < *incount; i++) array_of_indices[i]++;\n"
    lname = tolower(fname)
    for (pass = 0; pass < 2; pass++) {
        if (pass && !(fname in pmpi)) {
            skip(fname, "no PMPI_" fname " in mpi.h: mpi_" lname "_ only")
            break
        }
        pfx = pass ? "p" : ""
        cpfx = pass ? "PMPI_" : "MPI_"
        if (ret == "int") {
            printf "CR_FEXPORT void %smpi_%s_(%s%sMPI_Fint *ierr%s)\n{\n", pfx, lname, params,
                   (params == "" ? "" : ", "), lens
            printf "%s    int rc = %s%s(%s);\n%s    *ierr = rc;\n}\n\n", pre, cpfx, fname, call, post
        } else {
            printf "CR_FEXPORT %s %smpi_%s_(%s)\n{\n    return %s%s(%s);\n}\n\n", ret, pfx, lname,
                   (params == "" ? "void" : params), cpfx, fname, call
        }
    }
}

# ---- one `use mpi` interface ---------------------------------------------------
# The routines wrapper() makes, with mpif.h's types: handles are INTEGERs,
# statuses INTEGER(MPI_STATUS_SIZE), ierror required; no intents (the entry
# points are the C wrappers).
function usetype(bt, nm) {
    if (bt == "int") return (nm ~ logicals) ? "logical" : "integer"
    if (bt ~ handles || bt == "MPI_Fint") return "integer"
    if (bt == "MPI_Aint") return "integer(MPI_ADDRESS_KIND)"
    if (bt == "MPI_Count") return "integer(MPI_COUNT_KIND)"
    if (bt == "MPI_Offset") return "integer(MPI_OFFSET_KIND)"
    return ""
}

function usempi(d,    ret, fname, args, n, a, i, t, nm, br, bt, ft, fargs, fdecl) {
    gsub(/[ \t]+/, " ", d)
    d = trim(d)
    ret = d; sub(/ .*/, "", ret)
    fname = d; sub(/^[A-Za-z_]+ MPI_/, "", fname); sub(/\(.*/, "", fname)
    if (fname ~ special || ret != "int") return # functions keep mpif.h's declarations
    args = d; sub(/^[^(]*\(/, "", args); sub(/\)[^)]*;$/, "", args)
    if (args ~ /\*\*|\*[a-z_]+\[\]|\.\.\./) return # not in Fortran (wrapper() says so)
    n = (args == "void") ? 0 : split(args, a, ",")
    fargs = ""; fdecl = ""
    for (i = 1; i <= n; i++) {
        a[i] = trim(a[i])
        if (!match(a[i], /[A-Za-z_][A-Za-z0-9_]*$/) && !match(a[i], /[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])+$/))
            return
        t = trim(substr(a[i], 1, RSTART - 1)); nm = substr(a[i], RSTART); br = ""
        if (index(nm, "[")) { br = substr(nm, index(nm, "[")); nm = substr(nm, 1, index(nm, "[") - 1) }
        fargs = fargs nm ", &\n        "
        bt = t; sub(/^const /, "", bt); sub(/ ?\*$/, "", bt)
        if (t ~ /char/) fdecl = fdecl "      character(len=*) :: " nm "\n"
        else if (bt == "MPI_Status")
            fdecl = fdecl "      integer :: " nm "(MPI_STATUS_SIZE" (br != "" ? ", *" : "") ")\n"
        else if (t ~ /void \*$/ && nm ~ choice)
            fdecl = fdecl "      !GCC$ ATTRIBUTES NO_ARG_CHECK :: " nm "\n      real, dimension(*) :: " nm "\n"
        else {
            ft = usetype(bt, nm)
            if (ft == "" || (br != "" && br != "[]" && br != "[][3]")) return
            fdecl = fdecl "      " ft " :: " nm (br == "[]" ? "(*)" : br == "[][3]" ? "(3, *)" : "") "\n"
        }
    }
    printf "    subroutine MPI_%s(%sierror)\n      import\n%s      integer :: ierror\n    end subroutine MPI_%s\n",
           fname, fargs, fdecl, fname
}

# ---- one mpi_f08 routine -------------------------------------------------------
# f08c: the C function courier_f08_<name> the module binds to (BIND(C)): the
# same translation as above, but choice buffers arrive as C descriptors
# (TS 29113's TYPE(*), DIMENSION(..)), statuses as TYPE(MPI_Status) (the C
# layout), and ierror is OPTIONAL (NULL when absent). f08mod: the interface
# block of the same routine. Routines with strings, procedure arguments or
# other untyped pointers are left out of mpi_f08 (docs/fortran.md).
function f08type(bt, nm) {
    if (bt == "int") return (nm ~ logicals) ? "logical" : "integer"
    if (bt ~ handles) return "type(" bt ")"
    if (bt == "MPI_Aint") return "integer(MPI_ADDRESS_KIND)"
    if (bt == "MPI_Count") return "integer(MPI_COUNT_KIND)"
    if (bt == "MPI_Offset") return "integer(MPI_OFFSET_KIND)"
    return ""
}

function f08(d,    ret, fname, args, n, a, i, t, nm, br, params, pre, call, post, countarg, lname,
             sep, csep, tt, bt, ft, fdecl, fargs, dim, intent, at) {
    gsub(/[ \t]+/, " ", d)
    d = trim(d)
    ret = d; sub(/ .*/, "", ret)
    fname = d; sub(/^[A-Za-z_]+ MPI_/, "", fname); sub(/\(.*/, "", fname)
    if (fname ~ special) return
    args = d; sub(/^[^(]*\(/, "", args); sub(/\)[^)]*;$/, "", args)
    hasstr = (args ~ /char/)
    if (hasstr != (mode == "f08proc")) return # strings: f08proc only, and only them
    if (args ~ /\.\.\.|_function|_fn|char \*\*|\*\*\*|\*[a-z_]+\[\]/) {
        skip(fname, "procedure or array of strings")
        return
    }
    n = (args == "void") ? 0 : split(args, a, ",")
    params = ""; pre = ""; call = ""; post = ""; countarg = ""; fdecl = ""; fargs = ""
    idecl = ""; ndecl = ""; lenargs = ""; ilens = ""; tmps = ""
    # whose error handler hears of a buffer refused (cr_f08at): the call's
    # file, window, else communicator (fortran08.h)
    at = "CR_F08_AT(\"MPI_" fname "\")"
    for (i = 1; i <= n; i++) {
        if (trim(a[i]) == "MPI_File fh") { at = "CR_F08_FILE(\"MPI_" fname "\", *fh)"; break }
        if (trim(a[i]) == "MPI_Win win") { at = "CR_F08_WIN(\"MPI_" fname "\", *win)"; break }
        if (trim(a[i]) == "MPI_Comm comm") at = "CR_F08_COMM(\"MPI_" fname "\", *comm)"
    }
    split("", subst) # count and datatype arguments a section's datatype replaces
    split("", doneb) # buffers an earlier argument's helper already gave
    # blocking: done with its buffers when it returns (no request, no window,
    # no attached buffer, no split collective), so that a non-contiguous
    # section may go through a contiguous copy
    blocking = args !~ /MPI_Request \*|MPI_Win win/ && fname !~ /^(Win_|Buffer_attach|[A-Za-z]+_attach_buffer|File_[a-z_]+_(begin|end)|Free_mem)/
    for (i = 1; i <= n; i++) {
        a[i] = trim(a[i])
        if (match(a[i], /[A-Za-z_][A-Za-z0-9_]*$/) || match(a[i], /[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])+$/)) {
            t = trim(substr(a[i], 1, RSTART - 1)); nm = substr(a[i], RSTART); br = ""
            if (index(nm, "[")) { br = substr(nm, index(nm, "[")); nm = substr(nm, 1, index(nm, "[") - 1) }
        } else { skip(fname, "argument " i); return }
        if (nm == "count" || nm == "incount") countarg = nm
        sep = (params == "") ? "" : ", "
        csep = (call == "") ? "" : ", "
        intent = (t ~ /const/) ? ", intent(in)" : ""
        fargs = fargs (fargs == "" ? "" : ", ") nm
        flen = length(fdecl)
        if (t ~ /char/) {
            fdecl = fdecl "      character(len=*)" intent " :: " nm "\n"
            idecl = idecl "        character(kind=c_char) :: " nm "(*)\n"
            ilens = ilens ", " nm "_len"
            idecl = idecl "        integer(c_size_t), value :: " nm "_len\n"
            lenargs = lenargs ", len(" nm ", kind=c_size_t)"
            continue
        }
        if (hasstr && (t ~ /MPI_Status|void/)) { skip(fname, "a string with " nm); return }
        if (t ~ /MPI_Status/) {
            params = params sep "MPI_F08_status *" nm
            if (br != "") {
                pre = pre "    MPI_Status *" nm "_p = cr_f08statuses_in(" nm ", *" countarg ");\n" \
                      "    if (" nm "_p == CR_FNOMEM) {" tmps " if (ierr) *ierr = MPI_ERR_NO_MEM; return; }\n"
                post = post "    cr_f08statuses_out(" nm ", " nm "_p, *" countarg ");\n"
                fdecl = fdecl "      type(MPI_Status)" intent " :: " nm "(*)\n"
            } else {
                pre = pre "    MPI_Status " nm "_c;\n    MPI_Status *" nm "_p = cr_f08status_in(" nm ", &" nm "_c);\n"
                if (t !~ /const/) post = post "    cr_f08status_out(" nm ", " nm "_p);\n"
                fdecl = fdecl "      type(MPI_Status)" intent " :: " nm "\n"
            }
            call = call csep nm "_p"
        } else if (t ~ /void \*$/ && nm ~ choice) {
            params = params sep "CFI_cdesc_t *" nm
            if (blocking) {
                # a non-contiguous section: through a contiguous copy
                pre = pre "    void *" nm "_b, *" nm "_t = NULL;\n    if (cr_f08buf_copy(" nm ", &" nm "_b, &" nm \
                      "_t, " at ", ierr)) {" tmps " return; }\n"
                post = post "    cr_f08buf_back(" nm ", " nm "_t, " (t ~ /const/ ? "false" : "rc == MPI_SUCCESS") ");\n"
                tmps = tmps " free(" nm "_t);"
            } else if (nm in doneb) {
                # given by the reduction's helper with the send buffer
            } else if (fname ~ nbred && nm == "sendbuf" && i + 3 <= n && trim(a[i + 1]) == "void *recvbuf" &&
                       trim(a[i + 2]) == "int count" && trim(a[i + 3]) == "MPI_Datatype datatype") {
                # a reduction's two buffers, one (count, datatype) for both
                pre = pre "    void *sendbuf_b = NULL, *recvbuf_b = NULL;\n    int sendbuf_n = *count;\n" \
                      "    MPI_Datatype sendbuf_dt = *datatype, sendbuf_nt = MPI_DATATYPE_NULL;\n" \
                      "    if (cr_f08buf_nb2(sendbuf, recvbuf, &sendbuf_b, &recvbuf_b, &sendbuf_n, &sendbuf_dt, " \
                      "&sendbuf_nt, " at ", ierr)) {" tmps " return; }\n"
                post = post "    if (sendbuf_nt != MPI_DATATYPE_NULL) PMPI_Type_free(&sendbuf_nt);\n"
                tmps = tmps " if (sendbuf_nt != MPI_DATATYPE_NULL) PMPI_Type_free(&sendbuf_nt);"
                subst["count"] = "sendbuf_n"; subst["datatype"] = "sendbuf_dt"; doneb["recvbuf"] = 1
            } else if (i + 2 <= n && trim(a[i + 1]) ~ /^int [a-z_]*count$/ &&
                       trim(a[i + 2]) ~ /^MPI_Datatype [a-z_]*type$/ &&
                       (fname ~ nbsect || fname ~ nba2a || (nm == "sendbuf" && fname ~ nbgath "|" nbscatblk) ||
                        (nm == "recvbuf" && fname ~ nbscat "|" nbgathblk))) {
                # (buffer, count, datatype) of a nonblocking call: a section
                # goes as a derived datatype describing it (cr_f08buf_nb), or
                # one of its per-rank blocks (cr_f08buf_nbblk)
                blk = (fname ~ nba2a || (nm == "sendbuf" && fname ~ nbscatblk) ||
                       (nm == "recvbuf" && fname ~ nbgathblk)) ? "blk" : ""
                cn = trim(a[i + 1]); sub(/^int /, "", cn)
                dn = trim(a[i + 2]); sub(/^MPI_Datatype /, "", dn)
                pre = pre "    void *" nm "_b = NULL;\n    int " nm "_n = *" cn ";\n    MPI_Datatype " nm "_dt = *" dn \
                      ", " nm "_nt = MPI_DATATYPE_NULL;\n    if (cr_f08buf_nb" blk "(" nm ", &" nm "_b, &" nm "_n, &" nm \
                      "_dt, &" nm "_nt, " at ", ierr)) {" tmps " return; }\n"
                post = post "    if (" nm "_nt != MPI_DATATYPE_NULL) PMPI_Type_free(&" nm "_nt);\n"
                tmps = tmps " if (" nm "_nt != MPI_DATATYPE_NULL) PMPI_Type_free(&" nm "_nt);"
                subst[cn] = nm "_n"; subst[dn] = nm "_dt"
            } else
                pre = pre "    void *" nm "_b = NULL;\n    if (cr_f08buf(" nm ", &" nm "_b, " at ", ierr)) {" tmps " return; }\n"
            call = call csep nm "_b"
            fdecl = fdecl "      type(*), dimension(..)" intent ", asynchronous :: " nm "\n"
        } else if (t ~ /^void \*$/ && nm ~ /^(baseptr|buffer_addr)$/) {
            # an address MPI gives: TYPE(C_PTR), which C sees as a void *
            params = params sep "void *" nm
            call = call csep nm
            fdecl = fdecl "      type(c_ptr) :: " nm "\n"
        } else if (t ~ /void/) {
            skip(fname, nm)
            return
        } else if (t ~ /\*$/ || br != "") {
            bt = t; sub(/^const /, "", bt); sub(/ ?\*$/, "", bt)
            ft = f08type(bt, nm)
            if (ft == "") { skip(fname, nm); return }
            dim = (br == "[]") ? "(*)" : (br == "[][3]") ? "(3,*)" : ""
            params = params sep t (t ~ /\*$/ ? "" : " ") nm br
            if (nm ~ /weights$/ && t ~ /const/) call = call csep "cr_fweights(" nm ")"
            else call = call csep nm
            fdecl = fdecl "      " ft intent " :: " nm dim "\n"
        } else {
            tt = t; sub(/^const /, "", tt)
            ft = f08type(tt, nm)
            if (ft == "") { skip(fname, nm); return }
            params = params sep tt " *" nm
            call = call csep ((nm in subst) ? subst[nm] : "*" nm)
            fdecl = fdecl "      " ft ", intent(in) :: " nm "\n"
        }
        ndecl = ndecl substr(fdecl, flen + 1)
    }
    if (fname ~ /^(Waitany|Testany|Request_get_status_any)$/)
        post = post "    if (rc == MPI_SUCCESS && *index >= 0) ++*index; /* Fortran counts from 1 */\n"
    if (fname ~ /^(Waitsome|Testsome|Request_get_status_some)$/)
        post = post "    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED)\n" \
                    "        for (int i = 0; i < *outcount && i < *incount; i++) array_of_indices[i]++;\n"
    lname = tolower(fname)
    if (mode == "f08proc") {
        # A module procedure: the mpif.h entry point (mpi_x_) does the work,
        # the string lengths given as gfortran passes them.
        # One argument a line (continued with &): long lists stay within
        # free form's 132 columns.
        idecl = ndecl idecl
        hargs = fargs (fargs == "" ? "" : ", ") "ierror"
        iargs = fargs ", cr_e" ilens
        cargs = fargs ", cr_e" lenargs
        gsub(/, /, ", \\&\n        ", hargs)
        gsub(/, /, ", \\&\n        ", iargs)
        gsub(/, /, ", \\&\n        ", cargs)
        printf "  subroutine MPI_%s(%s)\n%s", fname, hargs, fdecl
        printf "      integer, optional, intent(out) :: ierror\n      integer :: cr_e\n      interface\n"
        printf "      subroutine cr_f(%s) bind(C, name=\"mpi_%s_\")\n", iargs, lname
        printf "        import\n%s        integer :: cr_e\n      end subroutine cr_f\n    end interface\n", idecl
        printf "    call cr_f(%s)\n    if (present(ierror)) ierror = cr_e\n", cargs
        printf "  end subroutine MPI_%s\n", fname
        # its PMPI_ name: the same through mpif.h's pmpi_x_ (a tool's MPI_X
        # calls it, and it reaches courier's PMPI_X, not the tool again)
        printf "  subroutine PMPI_%s(%s)\n%s", fname, hargs, fdecl
        printf "      integer, optional, intent(out) :: ierror\n      integer :: cr_e\n      interface\n"
        printf "      subroutine cr_f(%s) bind(C, name=\"pmpi_%s_\")\n", iargs, lname
        printf "        import\n%s        integer :: cr_e\n      end subroutine cr_f\n    end interface\n", idecl
        printf "    call cr_f(%s)\n    if (present(ierror)) ierror = cr_e\n", cargs
        printf "  end subroutine PMPI_%s\n", fname
        return
    }
    if (mode == "f08c") {
        if (ret != "int") return # bound to the C function itself
        printf "CR_FEXPORT void courier_f08_%s(%s%sMPI_Fint *ierr)\n{\n", lname, params,
               (params == "" ? "" : ", ")
        printf "%s    int rc = MPI_%s(%s);\n%s    if (ierr) *ierr = rc;\n}\n\n", pre, fname, call, post
        printf "CR_FEXPORT void courier_f08_pmpi_%s(%s%sMPI_Fint *ierr)\n{\n", lname, params,
               (params == "" ? "" : ", ")
        printf "%s    int rc = PMPI_%s(%s);\n%s    if (ierr) *ierr = rc;\n}\n\n", pre, fname, call, post
        return
    }
    gsub(/, /, ", \\&\n        ", fargs)
    # A _c form joins its plain form's generic name: that form made here, and
    # the two told apart by their arguments' types (not where the count's
    # kind is the address's: MPI_Type_get_extent_c, ...).
    if (largec) {
        base = fname; sub(/_c$/, "", base)
        if (!(base in made)) { skip(fname, "no generated " base " to join"); return }
        if (sigof(fdecl) == made[base]) { skip(fname, "the same Fortran types as MPI_" base); return }
        printf "  end interface\n  interface MPI_%s\n    procedure :: MPI_%s\n  end interface\n", base, base
        printf "  interface MPI_%s\n", base
    } else if (ret == "int")
        made[fname] = sigof(fdecl)
    # each twice: the MPI_ name and the PMPI_ one (its own C entry point,
    # which calls courier's PMPI_X), the _c forms in PMPI_base's generic too
    for (pf = 0; pf < 2; pf++) {
        P = pf ? "P" : ""
        cn = (pf ? "courier_f08_pmpi_" : "courier_f08_") lname
        if (pf && largec)
            printf "  end interface\n  interface PMPI_%s\n    procedure :: PMPI_%s\n  end interface\n" \
                   "  interface PMPI_%s\n", base, base, base
        if (ret == "int") {
            printf "    subroutine %sMPI_%s(%s%sierror) &\n        bind(C, name=\"%s\")\n      import\n",
                   P, fname, fargs, (fargs == "" ? "" : ", &\n        "), cn
            printf "%s      integer, optional, intent(out) :: ierror\n    end subroutine %sMPI_%s\n", fdecl, P,
                   fname
            if (largec) print "  end interface\n  interface"
        } else {
            fd = fdecl
            gsub(/, intent\(in\)/, ", value", fd)
            printf "    function %sMPI_%s(%s) bind(C, name=\"%sMPI_%s\")\n      import\n", P, fname, fargs, P,
                   fname
            printf "%s      %s :: %sMPI_%s\n    end function %sMPI_%s\n", fd,
                   (ret == "double") ? "double precision" : "integer(MPI_ADDRESS_KIND)", P, fname, P, fname
        }
    }
}
