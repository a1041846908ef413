package service

func (s *Service) transferRoutes() []route {
	return []route{}
}
