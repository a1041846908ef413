package service

func (s *Service) incomingRoutes() []route {
	return []route{}
}
