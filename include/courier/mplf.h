!     mplf.h: MPL for Fortran (courier; docs/fortran.md, docs/mpl.md).
!     The wildcards and the group of all tasks (as MP_TASK_QUERY with
!     query type 3 gives them), MP_STATUS's results, the query and set
!     types, and the predefined reduction functions for MP_REDUCE,
!     MP_COMBINE and MP_PREFIX. The MP_ calls are subroutines that may
!     also be called as INTEGER functions (0 on success, -1 on error).
!     Every argument is a default INTEGER (or a buffer), by reference.
!     Fixed or free form. Link with courier-fort.
      INTEGER DONTCARE, ALLMSG, NULLTASK, ALLGRP
      PARAMETER (DONTCARE=-1, ALLMSG=-2, NULLTASK=-3, ALLGRP=0)
      INTEGER MPL_NOT_COMPLETED, MPL_INACTIVE
      PARAMETER (MPL_NOT_COMPLETED=-1, MPL_INACTIVE=-2)
      INTEGER MPL_Q_BUFFERS, MPL_Q_TYPES, MPL_Q_WILDCARDS
      PARAMETER (MPL_Q_BUFFERS=1, MPL_Q_TYPES=2, MPL_Q_WILDCARDS=3)
      INTEGER MPL_Q_OVERFLOW, MPL_Q_ERRORS
      PARAMETER (MPL_Q_OVERFLOW=4, MPL_Q_ERRORS=5)
      INTEGER MP_STATUS
      EXTERNAL MP_STATUS
      EXTERNAL S_VADD, D_VADD, I_VADD, S_VMUL, D_VMUL, I_VMUL
      EXTERNAL S_VMAX, D_VMAX, I_VMAX, S_VMIN, D_VMIN, I_VMIN
      EXTERNAL I_VAND, I_VOR, I_VXOR, B_VAND, B_VOR, B_VXOR
      EXTERNAL L_VAND, L_VOR, L_VXOR
