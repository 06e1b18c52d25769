"""Pure control algorithms: PR2 gripper controller, tactile processing and the GraspFix grip criterion."""
