"""The process machinery both sides stand on: how a judge runs, how target processes start and
end, what contains them.

    sandbox    run one check's judge (forked, or in the lane) so that a hang or a crash of the
               code under grade never reaches the grader
    zygote     the judge's side of the zygote: start it, ask it for a target server
    launch     what a launcher is, and `spawn`: a target process as a fresh interpreter
    portable   the path where there is no fork (Windows, macOS): chosen by feature, spawned
               targets on stdin/stdout (with spares started ahead), processes ended by Popen.kill
    forkloop   a fork server's loop (the zygote's, the batch's)
    jail       Landlock: the target processes and the judges write only their own folder
    hygiene    nothing a check, a grade or a lane started outlives it
    stuck      a lane's mark: its judge runs the code's SQL now (an overdue lane is then the
               code's doing, not the grader's)
    workroot   where the temporary folders live, and who removes them

May import: the standard library and the grader's top-level basics (`grader.results`). Never
`grader.harness.judge` or `grader.harness.target`: the machinery runs a judge or a target without
knowing what either does.
"""
