package notify

import "os"

func pid() int { return os.Getpid() }
